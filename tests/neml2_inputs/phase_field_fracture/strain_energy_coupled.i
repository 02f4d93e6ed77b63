# LinearIsotropicStrainEnergyDensity: the bulk modulus given by a variable, the
# volumetric-deviatoric split
[Models]
  [model]
    type = LinearIsotropicStrainEnergyDensity
    coefficients = 'K 6e4'
    coefficient_types = 'BULK_MODULUS SHEAR_MODULUS'
    decomposition = 'VOLDEV'
  []
[]
