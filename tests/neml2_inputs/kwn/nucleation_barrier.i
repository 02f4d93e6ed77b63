# NucleationBarrierAndCriticalRadius: every parameter a number, so the model has no
# inputs
[Models]
  [model]
    type = NucleationBarrierAndCriticalRadius
    surface_energy = 0.12
    total_gibbs_free_energy_difference = 6.5e3
    molar_volume = 1.0e-5
  []
[]
