# HermiteSmoothStep: below, inside and above the bounds
[Models]
  [model]
    type = HermiteSmoothStep
    argument = 'T'
    value = 'w'
    lower_bound = 300
    upper_bound = 500
  []
[]
