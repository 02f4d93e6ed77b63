# KineticFactor: the default variable names
[Models]
  [model]
    type = KineticFactor
    molar_volume = 1.0e-5
    avogadro_number = 6.02214076e23
  []
[]
