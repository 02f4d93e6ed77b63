# WR2ParameterToVariable with a named output
[Models]
  [model]
    type = WR2ParameterToVariable
    from = '-1.2014 1.76628 1.19397'
    to = 'q'
  []
[]
