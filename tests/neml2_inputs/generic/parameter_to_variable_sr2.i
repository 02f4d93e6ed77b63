# SR2ParameterToVariable with a named output
[Models]
  [model]
    type = SR2ParameterToVariable
    from = '0.286467 -2.62327 -2.64239 -1.76425 1.0824 -0.434446'
    to = 'q'
  []
[]
