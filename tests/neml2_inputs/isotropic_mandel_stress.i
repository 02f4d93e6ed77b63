# IsotropicMandelStress
[Models]
  [model]
    type = IsotropicMandelStress
    cauchy_stress = 'stress'
  []
[]
