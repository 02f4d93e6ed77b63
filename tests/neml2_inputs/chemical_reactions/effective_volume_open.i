# EffectiveVolume: two components, an open volume fraction, a named output
[Models]
  [model]
    type = EffectiveVolume
    open_volume_fraction = 'phi_o'
    mass_fractions = 'w1 w2'
    densities = '2.0 3.0'
    reference_mass = 0.8
    composite_volume = 'V'
  []
[]
