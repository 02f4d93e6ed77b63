# WR2ExplicitExponentialTimeIntegration with a named rate and time
[Models]
  [model]
    type = WR2ExplicitExponentialTimeIntegration
    variable = 'Q'
    rate = 'spin'
    time = 'time'
  []
[]
