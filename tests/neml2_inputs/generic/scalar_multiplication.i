# ScalarMultiplication of two variables, default scaling and reciprocal
[Models]
  [model]
    type = ScalarMultiplication
    from = 'a b'
  []
[]
