# GeneralElasticity whose stiffness tensor is the output of a CubicElasticityTensor (an
# SSR4 parameter given by a model), whose shear modulus is in turn a variable
[Models]
  [stiffness]
    type = CubicElasticityTensor
    coefficients = 'shear_modulus 1.9e5 0.28'
    coefficient_types = 'SHEAR_MODULUS YOUNGS_MODULUS POISSONS_RATIO'
  []
  [elastic]
    type = GeneralElasticity
    elastic_stiffness_tensor = 'stiffness'
  []
  [model]
    type = ComposedModel
    models = 'elastic'
  []
[]
