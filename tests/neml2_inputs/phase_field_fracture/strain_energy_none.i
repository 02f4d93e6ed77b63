# LinearIsotropicStrainEnergyDensity: no decomposition (all of it active), E and nu
[Models]
  [model]
    type = LinearIsotropicStrainEnergyDensity
    coefficients = '200e3 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
