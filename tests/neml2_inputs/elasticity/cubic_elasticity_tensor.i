# cubic symmetry from the shear modulus, Young's modulus and Poisson's ratio
[Models]
  [model]
    type = CubicElasticityTensor
    coefficients = '60e3 120e3 0.33'
    coefficient_types = 'SHEAR_MODULUS YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
