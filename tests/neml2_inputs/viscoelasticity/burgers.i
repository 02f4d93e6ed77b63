# BurgersElement: the default names
[Models]
  [model]
    type = BurgersElement
    maxwell_modulus = 3000
    maxwell_viscosity = 5e4
    kelvin_modulus = 1500
    kelvin_viscosity = 800
  []
[]
