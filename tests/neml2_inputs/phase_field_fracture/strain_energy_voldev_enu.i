# LinearIsotropicStrainEnergyDensity: the volumetric-deviatoric split with E and nu
[Models]
  [model]
    type = LinearIsotropicStrainEnergyDensity
    coefficients = '1e3 0.25'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    decomposition = 'VOLDEV'
  []
[]
