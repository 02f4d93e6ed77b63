# ScalarBackwardEulerTimeIntegration
[Models]
  [model]
    type = ScalarBackwardEulerTimeIntegration
    variable = 'equivalent_plastic_strain'
  []
[]
