# BilinearTraction: full separation at the critical one, so the damage jumps from 0 to 1
[Models]
  [model]
    type = BilinearTraction
    penalty_stiffness = 800
    critical_separation = 0.3
    full_separation = 0.3
  []
[]
