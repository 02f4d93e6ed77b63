# SymmetricHermiteInterpolation: a named output, default argument name
[Models]
  [model]
    type = SymmetricHermiteInterpolation
    output = 'bump'
    lower_bound = -2
    upper_bound = 3
  []
[]
