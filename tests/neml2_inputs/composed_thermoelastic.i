# Thermo-elasticity composed as NEML2 writes it: eigenstrain, elastic strain, stress,
# with additional_outputs exposing a consumed variable.
[Models]
  [eigenstrain]
    type = ThermalEigenstrain
    reference_temperature = 300
    CTE = 1e-5
  []
  [elastic_strain]
    type = SR2LinearCombination
    from = 'strain eigenstrain'
    to = 'elastic_strain'
    weights = '1 -1'
  []
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '2e5 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    strain = 'elastic_strain'
  []
  [model]
    type = ComposedModel
    models = 'eigenstrain elastic_strain elasticity'
    additional_outputs = 'elastic_strain'
  []
[]
