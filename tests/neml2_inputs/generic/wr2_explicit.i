# WR2ExplicitExponentialTimeIntegration of an orientation
[Models]
  [model]
    type = WR2ExplicitExponentialTimeIntegration
    variable = 'orientation'
  []
[]
