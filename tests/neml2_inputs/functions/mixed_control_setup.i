# MixedControlSetup: the default names and threshold
[Models]
  [model]
    type = MixedControlSetup
  []
[]
