# R2ForwardEulerTimeIntegration with a named rate and old value
[Models]
  [model]
    type = R2ForwardEulerTimeIntegration
    variable = 'F'
    rate = 'L'
    old_variable = 'F0'
  []
[]
