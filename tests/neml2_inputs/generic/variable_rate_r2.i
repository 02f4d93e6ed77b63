# R2VariableRate with a named time and rate
[Models]
  [model]
    type = R2VariableRate
    variable = 'F'
    time = 'time'
    variable_rate = 'Fdot'
  []
[]
