# R2InputParameter with named variables
[Models]
  [model]
    type = R2InputParameter
    variable = 'x'
    parameter = 'p'
  []
[]
