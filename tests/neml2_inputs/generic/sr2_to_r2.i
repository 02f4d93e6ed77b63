# SR2ToR2
[Models]
  [model]
    type = SR2ToR2
  []
[]
