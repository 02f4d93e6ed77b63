# SSR4InputParameter with its default variable names
[Models]
  [model]
    type = SSR4InputParameter
  []
[]
