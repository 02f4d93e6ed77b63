# VecVariableRate with its derived names (x~1, x_rate, t, t~1)
[Models]
  [model]
    type = VecVariableRate
    variable = 'x'
  []
[]
