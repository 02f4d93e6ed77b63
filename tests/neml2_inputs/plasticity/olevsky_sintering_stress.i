# OlevskySinteringStress
[Models]
  [model]
    type = OlevskySinteringStress
    void_fraction = 'phi'
    surface_tension = 1.8
    particle_radius = 2.5e-3
  []
[]
