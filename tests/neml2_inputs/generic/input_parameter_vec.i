# VecInputParameter with its default variable names
[Models]
  [model]
    type = VecInputParameter
  []
[]
