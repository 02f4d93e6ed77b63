# PowerLawPermeability: the default names
[Models]
  [model]
    type = PowerLawPermeability
    reference_permeability = 1e-12
    reference_porosity = 0.25
    exponent = 3
  []
[]
