# WR2InputParameter with named variables
[Models]
  [model]
    type = WR2InputParameter
    variable = 'x'
    parameter = 'p'
  []
[]
