# KocksMeckingFlowSwitch with a sharper switch than the default
[Models]
  [model]
    type = KocksMeckingFlowSwitch
    rate_independent_flow_rate = 'ri'
    rate_dependent_flow_rate = 'rd'
    g0 = 0.6
    sharpness = 4.0
  []
[]
