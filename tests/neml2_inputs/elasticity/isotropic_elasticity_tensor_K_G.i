# bulk and shear moduli
[Models]
  [model]
    type = IsotropicElasticityTensor
    coefficients = '160e3 79e3'
    coefficient_types = 'BULK_MODULUS SHEAR_MODULUS'
    C = C
  []
[]
