# ZenerElement: a named viscous strain, its rate renamed by the option of the default name
[Models]
  [model]
    type = ZenerElement
    strain = 'eps'
    viscous_strain = 'eps_v'
    viscous_strain_rate = 'eps_v_dot'
    stress = 'sigma'
    equilibrium_modulus = 7e4
    maxwell_modulus = 3e4
    maxwell_viscosity = 9e5
  []
[]
