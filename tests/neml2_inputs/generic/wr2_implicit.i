# WR2ImplicitExponentialTimeIntegration of an orientation
[Models]
  [model]
    type = WR2ImplicitExponentialTimeIntegration
    variable = 'orientation'
    rate = 'spin'
  []
[]
