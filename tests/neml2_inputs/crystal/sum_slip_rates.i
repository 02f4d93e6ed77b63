[Settings]
  [example_batch_shape]
    slip_rates = '(2; 12)'
  []
[]
[Models]
  [model]
    type = SumSlipRates
    sum_slip_rates = total
  []
[]
