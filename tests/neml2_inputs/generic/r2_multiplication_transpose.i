# R2Multiplication A^T inv(B)^T
[Models]
  [model]
    type = R2Multiplication
    transpose_A = true
    invert_B = true
    transpose_B = true
  []
[]
