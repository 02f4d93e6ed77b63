# R2Multiplication inv(A) B^T
[Models]
  [model]
    type = R2Multiplication
    invert_A = true
    transpose_B = true
  []
[]
