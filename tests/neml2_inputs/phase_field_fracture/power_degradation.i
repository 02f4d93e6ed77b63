# PowerDegradationFunction: the default names, quadratic, no residual degradation
[Models]
  [model]
    type = PowerDegradationFunction
    power = 2
  []
[]
