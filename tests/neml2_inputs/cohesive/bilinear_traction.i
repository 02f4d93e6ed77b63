# BilinearTraction: the default names (damage~1 the previous damage)
[Models]
  [model]
    type = BilinearTraction
    penalty_stiffness = 1e4
    critical_separation = 0.01
    full_separation = 0.05
  []
[]
