# VecBackwardEulerTimeIntegration
[Models]
  [model]
    type = VecBackwardEulerTimeIntegration
    variable = 'x'
  []
[]
