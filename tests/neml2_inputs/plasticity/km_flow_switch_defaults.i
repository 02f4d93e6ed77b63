# KocksMeckingFlowSwitch, default sharpness and names
[Models]
  [model]
    type = KocksMeckingFlowSwitch
    g0 = 0.45
  []
[]
