# SR2BackwardEulerTimeIntegration with a named rate
[Models]
  [model]
    type = SR2BackwardEulerTimeIntegration
    variable = 'plastic_strain'
    rate = 'Ep_dot'
  []
[]
