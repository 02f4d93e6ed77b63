# WR2ConstantParameter with a named output
[Models]
  [model]
    type = WR2ConstantParameter
    parameter = 'c'
    value = '-1.11512 0.513371 -0.280894'
  []
[]
