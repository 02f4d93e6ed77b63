# Cohesive zone: the mode mixity feeds the Camanho-Davila critical separation and the
# Benzeggagh-Kenane full separation, which feed the bilinear traction law; only the
# traction law is listed, the three others come in through its parameters
[Models]
  [mixity]
    type = ModeMixity
    tangential_separation = 'tangential_separation'
  []
  [onset]
    type = CamanhoDavilaCriticalSeparation
    mode_mixity = 'mixity'
    penalty_stiffness = 1e4
    normal_strength = 30
    shear_strength = 45
  []
  [failure]
    type = BenzeggaghKenaneFullSeparation
    mode_mixity = 'mixity'
    critical_separation = 'onset'
    penalty_stiffness = 1e4
    mode_I_fracture_toughness = 0.4
    mode_II_fracture_toughness = 0.9
    shear_strength = 45
    eta = 1.7
  []
  [traction]
    type = BilinearTraction
    penalty_stiffness = 1e4
    critical_separation = 'onset'
    full_separation = 'failure'
  []
  [model]
    type = ComposedModel
    models = 'traction'
  []
[]
