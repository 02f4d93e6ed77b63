# ScalarForwardEulerTimeIntegration with another time
[Models]
  [model]
    type = ScalarForwardEulerTimeIntegration
    variable = 'ep'
    time = 'time'
  []
[]
