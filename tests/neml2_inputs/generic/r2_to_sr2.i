# R2ToSR2
[Models]
  [model]
    type = R2ToSR2
    input = 'L'
    output = 'D'
  []
[]
