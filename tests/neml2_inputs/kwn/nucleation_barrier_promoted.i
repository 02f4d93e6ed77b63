# NucleationBarrierAndCriticalRadius: variables give the surface energy and the driving
# force (positive and negative), the outputs renamed
[Models]
  [model]
    type = NucleationBarrierAndCriticalRadius
    surface_energy = 'gamma'
    total_gibbs_free_energy_difference = 'dg'
    molar_volume = 1.2e-5
    nucleation_barrier = 'G_star'
    critical_radius = 'R_star'
  []
[]
