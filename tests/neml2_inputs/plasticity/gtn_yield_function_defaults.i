# GTNYieldFunction without isotropic hardening, default variable names
[Models]
  [model]
    type = GTNYieldFunction
    yield_stress = 90
    q1 = 1.0
    q2 = 1.3
    q3 = 1.0
  []
[]
