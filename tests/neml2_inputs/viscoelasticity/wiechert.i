# WiechertElement: the default names
[Models]
  [model]
    type = WiechertElement
    equilibrium_modulus = 500
    modulus_1 = 1200
    viscosity_1 = 60
    modulus_2 = 300
    viscosity_2 = 4500
  []
[]
