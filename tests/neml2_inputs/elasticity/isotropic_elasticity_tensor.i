# C = 3 K I_vol + 2 G I_dev from Young's modulus and Poisson's ratio; the output is
# named after the block
[Models]
  [model]
    type = IsotropicElasticityTensor
    coefficients = '150e3 0.27'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
