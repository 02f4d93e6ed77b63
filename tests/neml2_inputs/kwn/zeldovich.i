# ZeldovichFactor: the default variable names
[Models]
  [model]
    type = ZeldovichFactor
    surface_energy = 0.12
    molar_volume = 1.0e-5
    avogadro_number = 6.02214076e23
    boltzmann_constant = 1.380649e-23
  []
[]
