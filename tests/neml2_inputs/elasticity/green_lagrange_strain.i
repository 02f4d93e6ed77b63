# E = (F^T F - I) / 2, default variable names
[Models]
  [model]
    type = GreenLagrangeStrain
  []
[]
