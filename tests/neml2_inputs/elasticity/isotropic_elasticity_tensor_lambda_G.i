# Lame's constants: NEML2 3.1.0 refuses this pair (only E-nu and K-G), ours gives
# the tensor of E = 200e3, nu = 0.25 (lambda = G = 80e3)
[Models]
  [model]
    type = IsotropicElasticityTensor
    coefficients = '80e3 80e3'
    coefficient_types = 'LAME_LAMBDA SHEAR_MODULUS'
  []
[]
