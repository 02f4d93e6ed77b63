# ExponentialLawPermeability: named variables
[Models]
  [model]
    type = ExponentialLawPermeability
    porosity = 'phi'
    permeability = 'K'
    reference_permeability = 2e-3
    reference_porosity = 0.3
    scale = 7.5
  []
[]
