# KineticFactor: variables give the molar volume and Avogadro's number; named variables
[Models]
  [model]
    type = KineticFactor
    critical_radius = 'Rc'
    projected_diffusivity_sum = 'psum'
    kinetic_factor = 'beta'
    molar_volume = 'Vm'
    avogadro_number = 'NA'
  []
[]
