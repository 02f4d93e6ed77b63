# LinearIsotropicElasticity in compliance form: strain from stress
[Models]
  [model]
    type = LinearIsotropicElasticity
    coefficients = '2e5 0.25'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    compliance = true
    stress = 'S'
    strain = 'elastic_strain'
  []
[]
