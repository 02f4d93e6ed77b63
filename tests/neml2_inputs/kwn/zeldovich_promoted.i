# ZeldovichFactor: a variable gives the surface energy; named variables
[Models]
  [model]
    type = ZeldovichFactor
    critical_radius = 'Rc'
    temperature = 'T'
    zeldovich_factor = 'Z'
    surface_energy = 'gamma'
    molar_volume = 1.1e-5
    avogadro_number = 6.02214076e23
    boltzmann_constant = 1.380649e-23
  []
[]
