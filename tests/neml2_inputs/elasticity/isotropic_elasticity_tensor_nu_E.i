# the same pair in the other order, the output renamed
[Models]
  [model]
    type = IsotropicElasticityTensor
    coefficients = '0.31 72e3'
    coefficient_types = 'POISSONS_RATIO YOUNGS_MODULUS'
    C = stiffness
  []
[]
