# CopySR2 with its default variable names from/to
[Models]
  [model]
    type = CopySR2
  []
[]
