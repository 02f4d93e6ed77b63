[Models]
  [model]
    type = LinearSingleSlipHardeningRule
    slip_hardening = h
    sum_slip_rates = gsum
    slip_hardening_rate = hdot
    hardening_slope = 150
  []
[]
