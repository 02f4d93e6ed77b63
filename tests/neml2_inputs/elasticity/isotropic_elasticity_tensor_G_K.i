# shear and bulk moduli, the shear modulus taken from a [Tensors] block
[Tensors]
  [shear]
    type = Python
    expr = 'Scalar(26.5e3)'
  []
[]
[Models]
  [model]
    type = IsotropicElasticityTensor
    coefficients = 'shear 68.5e3'
    coefficient_types = 'SHEAR_MODULUS BULK_MODULUS'
  []
[]
