# R2ToWR2
[Models]
  [model]
    type = R2ToWR2
    input = 'L'
    output = 'W'
  []
[]
