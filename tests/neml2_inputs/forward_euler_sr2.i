# SR2ForwardEulerTimeIntegration
[Models]
  [model]
    type = SR2ForwardEulerTimeIntegration
    variable = 'plastic_strain'
  []
[]
