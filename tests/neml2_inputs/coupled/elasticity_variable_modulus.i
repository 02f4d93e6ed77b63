# LinearIsotropicElasticity whose Young's modulus is the variable 'youngs_modulus' (an
# input of the model, with derivatives) and whose Poisson's ratio is a number
[Models]
  [model]
    type = LinearIsotropicElasticity
    coefficients = 'youngs_modulus 0.27'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
