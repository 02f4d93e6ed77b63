# R2BackwardEulerTimeIntegration with a named rate and residual
[Models]
  [model]
    type = R2BackwardEulerTimeIntegration
    variable = 'F'
    rate = 'L'
    variable_residual = 'rF'
  []
[]
