# Viscoelasticity: a Kelvin-Voigt element whose modulus is a variable and whose
# viscosity is a number
[Models]
  [model]
    type = KelvinVoigtElement
    modulus = 'E'
    viscosity = 250
  []
[]
