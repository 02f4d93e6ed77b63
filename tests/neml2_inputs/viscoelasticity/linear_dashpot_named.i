# LinearDashpot: named stress and rate, as a dashpot in a network of elements
[Models]
  [model]
    type = LinearDashpot
    stress = 'branch_stress'
    viscous_strain_rate = 'creep_rate'
    viscosity = 1.5e3
  []
[]
