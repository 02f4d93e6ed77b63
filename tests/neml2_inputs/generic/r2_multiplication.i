# R2Multiplication A B
[Models]
  [model]
    type = R2Multiplication
    A = 'F'
    B = 'G'
    to = 'FG'
  []
[]
