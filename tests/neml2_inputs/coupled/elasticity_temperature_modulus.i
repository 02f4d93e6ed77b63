# One model's output is another's parameter: E(T) = 2.1e5 - 60 T, a
# ScalarLinearCombination named by LinearIsotropicElasticity's coefficients; the
# ComposedModel lists only the elasticity and brings the modulus model in itself
[Models]
  [modulus]
    type = ScalarLinearCombination
    from = 'temperature'
    to = 'E'
    weights = -60
    offset = 2.1e5
  []
  [elastic]
    type = LinearIsotropicElasticity
    coefficients = 'modulus 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
  [model]
    type = ComposedModel
    models = 'elastic'
  []
[]
