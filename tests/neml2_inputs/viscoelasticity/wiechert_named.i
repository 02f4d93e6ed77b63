# WiechertElement: named branches; the first rate renamed, the second following its strain
[Models]
  [model]
    type = WiechertElement
    strain = 'e'
    viscous_strain_1 = 'fast'
    viscous_strain_2 = 'slow'
    viscous_strain_1_rate = 'fast_dot'
    stress = 's'
    equilibrium_modulus = 2.1e3
    modulus_1 = 8e2
    viscosity_1 = 1.6e1
    modulus_2 = 4e2
    viscosity_2 = 4e4
  []
[]
