# ScalarToDiagonalSR2
[Models]
  [model]
    type = ScalarToDiagonalSR2
    input = 'p'
    output = 'P'
  []
[]
