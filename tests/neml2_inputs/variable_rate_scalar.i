# ScalarVariableRate
[Models]
  [model]
    type = ScalarVariableRate
    variable = 'ep'
  []
[]
