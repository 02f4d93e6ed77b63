# YieldFunction with isotropic hardening
[Models]
  [model]
    type = YieldFunction
    yield_stress = 120
    isotropic_hardening = 'isotropic_hardening'
  []
[]
