# ZenerElement: the default names
[Models]
  [model]
    type = ZenerElement
    equilibrium_modulus = 1000
    maxwell_modulus = 2500
    maxwell_viscosity = 400
  []
[]
