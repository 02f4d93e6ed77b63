# CamanhoDavilaCriticalSeparation: pure opening (zero mode mixity), named variables
[Models]
  [model]
    type = CamanhoDavilaCriticalSeparation
    normal_separation = 'dn'
    critical_separation = 'dc'
    mode_mixity = 0
    penalty_stiffness = 5e5
    normal_strength = 45
    shear_strength = 75
  []
[]
