# RationalDegradationFunction: named variables and a residual degradation
[Models]
  [model]
    type = RationalDegradationFunction
    phase = 'd'
    degradation = 'g'
    power = 2.5
    b1 = 4.0
    b2 = 1.3
    b3 = 0.7
    eta = 2e-3
  []
[]
