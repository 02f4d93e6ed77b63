# CamanhoDavilaCriticalSeparation: mixed mode
[Models]
  [model]
    type = CamanhoDavilaCriticalSeparation
    mode_mixity = 0.7
    penalty_stiffness = 1e4
    normal_strength = 30
    shear_strength = 60
  []
[]
