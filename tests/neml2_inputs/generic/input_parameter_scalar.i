# ScalarInputParameter with its default variable names
[Models]
  [model]
    type = ScalarInputParameter
  []
[]
