# LinearKinematicHardening
[Models]
  [model]
    type = LinearKinematicHardening
    hardening_modulus = 5000
  []
[]
