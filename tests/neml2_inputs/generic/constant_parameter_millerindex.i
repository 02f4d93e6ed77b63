# MillerIndexConstantParameter with a named output
[Models]
  [model]
    type = MillerIndexConstantParameter
    parameter = 'c'
    value = '-2 1 3'
  []
[]
