# SR2InputParameter with its default variable names
[Models]
  [model]
    type = SR2InputParameter
  []
[]
