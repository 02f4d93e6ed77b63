[Models]
  [model]
    type = VoceSingleSlipHardeningRule
    initial_slope = 400
    saturated_hardening = 60
  []
[]
