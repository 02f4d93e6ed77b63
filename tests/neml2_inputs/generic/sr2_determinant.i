# SR2Determinant with its default variable names
[Models]
  [model]
    type = SR2Determinant
  []
[]
