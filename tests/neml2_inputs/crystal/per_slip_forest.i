[Settings]
  [example_batch_shape]
    rho = '(2; 12)'
    slip_rates = '(2; 12)'
  []
[]
[Models]
  [model]
    type = PerSlipForestDislocationEvolution
    dislocation_density = rho
    k1 = 3.0
    k2 = 0.7
  []
[]
