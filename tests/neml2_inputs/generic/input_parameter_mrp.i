# MRPInputParameter with its default variable names
[Models]
  [model]
    type = MRPInputParameter
  []
[]
