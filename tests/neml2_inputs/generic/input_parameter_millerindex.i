# MillerIndexInputParameter with its default variable names
[Models]
  [model]
    type = MillerIndexInputParameter
  []
[]
