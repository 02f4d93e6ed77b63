# RationalDegradationFunction: the default names, no residual degradation
[Models]
  [model]
    type = RationalDegradationFunction
    power = 2
    b1 = 1.2
    b2 = -0.5
    b3 = 0.3
  []
[]
