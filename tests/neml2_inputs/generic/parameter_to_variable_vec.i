# VecParameterToVariable with a named output
[Models]
  [model]
    type = VecParameterToVariable
    from = '-0.805866 -2.65201 0.0446144'
    to = 'q'
  []
[]
