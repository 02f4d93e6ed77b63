# Power-law slip rates, slip system by slip system
[Settings]
  [example_batch_shape]
    tau = '(2; 12)'
    strength = '(2; 12)'
  []
[]
[Models]
  [model]
    type = PowerLawSlipRule
    resolved_shears = tau
    slip_strengths = strength
    gamma0 = 0.02
    n = 7.5
  []
[]
