# LinearIsotropicElasticJ2TrialStressUpdate, Poisson's ratio given first
[Models]
  [model]
    type = LinearIsotropicElasticJ2TrialStressUpdate
    elastic_trial_stress = 's_trial'
    equivalent_plastic_strain = 'ep'
    updated_trial_stress = 's'
    coefficients = '0.3 2e5'
    coefficient_types = 'POISSONS_RATIO YOUNGS_MODULUS'
  []
[]
