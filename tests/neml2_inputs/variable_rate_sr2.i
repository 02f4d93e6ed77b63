# SR2VariableRate
[Models]
  [model]
    type = SR2VariableRate
    variable = 'E'
  []
[]
