# ScalarConstantParameter with a named output
[Models]
  [model]
    type = ScalarConstantParameter
    parameter = 'c'
    value = '-1.057'
  []
[]
