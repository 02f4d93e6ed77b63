# LinearDashpot: the default names (stress in, viscous_strain_rate out)
[Models]
  [model]
    type = LinearDashpot
    viscosity = 250
  []
[]
