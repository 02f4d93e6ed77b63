[Settings]
  [example_batch_shape]
    rho = '(2; 12)'
  []
[]
[Models]
  [model]
    type = DislocationObstacleStrengthMap
    dislocation_density = rho
    constant_strength = 20
    alpha = 0.3
    mu = 80000
    b = 2.5e-4
  []
[]
