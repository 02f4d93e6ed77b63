# ScalarMultiplication with one reciprocal for all variables
[Models]
  [model]
    type = ScalarMultiplication
    from = 'a b'
    scaling = 0.75
    reciprocal = 'true'
  []
[]
