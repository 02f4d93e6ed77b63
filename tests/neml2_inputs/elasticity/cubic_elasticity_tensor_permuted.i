# the three constants in another order, Young's modulus from [Tensors], output renamed
[Tensors]
  [E]
    type = Python
    expr = 'Scalar(210e3)'
  []
[]
[Models]
  [model]
    type = CubicElasticityTensor
    coefficients = '0.29 E 95e3'
    coefficient_types = 'POISSONS_RATIO YOUNGS_MODULUS SHEAR_MODULUS'
    C = C_cubic
  []
[]
