# MRPConstantParameter with a named output
[Models]
  [model]
    type = MRPConstantParameter
    parameter = 'c'
    value = '0.319626 0.223976 0.299611'
  []
[]
