# PowerLawFullSeparation: mixed mode
[Models]
  [model]
    type = PowerLawFullSeparation
    mode_mixity = 0.6
    critical_separation = 4e-3
    penalty_stiffness = 1e4
    mode_I_fracture_toughness = 0.3
    mode_II_fracture_toughness = 0.9
    shear_strength = 60
    eta = 1.8
  []
[]
