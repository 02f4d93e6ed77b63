# ScalarMultiplication with a scaling and per-variable reciprocals
[Models]
  [model]
    type = ScalarMultiplication
    from = 'a b c'
    to = 'p'
    scaling = -2.5
    reciprocal = 'true false true'
  []
[]
