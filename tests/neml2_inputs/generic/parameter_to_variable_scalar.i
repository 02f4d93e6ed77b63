# ScalarParameterToVariable with the default output 'to'
[Models]
  [model]
    type = ScalarParameterToVariable
    from = '-2.0949'
  []
[]
