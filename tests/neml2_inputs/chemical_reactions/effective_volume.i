# EffectiveVolume: three components, no leakage (no open volume fraction)
[Models]
  [model]
    type = EffectiveVolume
    mass_fractions = 'w_solid w_liquid w_product'
    densities = '2.2 1.1 3.5'
    reference_mass = 1.5
  []
[]
