# R2ParameterToVariable with a named output
[Models]
  [model]
    type = R2ParameterToVariable
    from = '2.68625 0.462618 -0.619917 2.85753 -2.7205 2.15081 -1.26234 -2.13447 -2.29325'
    to = 'q'
  []
[]
