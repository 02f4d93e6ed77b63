# MillerIndexParameterToVariable with a named output
[Models]
  [model]
    type = MillerIndexParameterToVariable
    from = '1 -2 -1'
    to = 'q'
  []
[]
