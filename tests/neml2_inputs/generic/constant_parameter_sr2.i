# SR2ConstantParameter with a named output
[Models]
  [model]
    type = SR2ConstantParameter
    parameter = 'c'
    value = '-1.14911 1.89676 -1.91564 0.489601 0.833481 -0.765615'
  []
[]
