# LinearIsotropicHardening
[Models]
  [model]
    type = LinearIsotropicHardening
    hardening_modulus = 1000
  []
[]
