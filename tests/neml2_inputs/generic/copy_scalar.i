# CopyScalar with its default variable names from/to
[Models]
  [model]
    type = CopyScalar
  []
[]
