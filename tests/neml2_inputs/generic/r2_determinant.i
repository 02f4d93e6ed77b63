# R2Determinant
[Models]
  [model]
    type = R2Determinant
    input = 'F'
    determinant = 'J'
  []
[]
