# KelvinVoigtElement: a named strain, whose rate input follows it (E_rate)
[Models]
  [model]
    type = KelvinVoigtElement
    strain = 'E'
    stress = 'S'
    modulus = 3.5e4
    viscosity = 2.2e3
  []
[]
