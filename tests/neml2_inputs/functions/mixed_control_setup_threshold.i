# MixedControlSetup: named variables and another threshold
[Models]
  [model]
    type = MixedControlSetup
    control = 'ctrl'
    x_above = 'stress'
    x_below = 'strain'
    y = 'fixed'
    z = 'free'
    threshold = 0.2
  []
[]
