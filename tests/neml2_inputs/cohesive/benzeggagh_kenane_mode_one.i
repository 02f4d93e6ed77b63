# BenzeggaghKenaneFullSeparation: pure opening (zero mode mixity), named variables
[Models]
  [model]
    type = BenzeggaghKenaneFullSeparation
    normal_separation = 'dn'
    full_separation = 'df'
    mode_mixity = 0
    critical_separation = 1e-3
    penalty_stiffness = 2e5
    mode_I_fracture_toughness = 0.25
    mode_II_fracture_toughness = 0.7
    shear_strength = 40
    eta = 1.5
  []
[]
