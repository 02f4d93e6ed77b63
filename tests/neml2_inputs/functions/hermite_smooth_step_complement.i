# HermiteSmoothStep: the complement, default names
[Models]
  [model]
    type = HermiteSmoothStep
    lower_bound = -1
    upper_bound = 2
    complement = true
  []
[]
