# PowerDegradationFunction: named variables, a cubic with a residual degradation
[Models]
  [model]
    type = PowerDegradationFunction
    phase = 'd'
    degradation = 'g'
    power = 3.5
    eta = 1e-3
  []
[]
