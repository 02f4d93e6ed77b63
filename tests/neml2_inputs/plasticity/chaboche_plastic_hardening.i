# ChabochePlasticHardening: kinematic hardening with dynamic and static recovery; the
# rate is named after the back stress
[Models]
  [model]
    type = ChabochePlasticHardening
    back_stress = 'X1'
    C = 5e3
    g = 12.5
    A = 2e-6
    a = 2.5
  []
[]
