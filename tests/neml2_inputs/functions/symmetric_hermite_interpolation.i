# SymmetricHermiteInterpolation: the output named after the block
[Models]
  [model]
    type = SymmetricHermiteInterpolation
    argument = 'phi'
    lower_bound = 0.1
    upper_bound = 0.9
  []
[]
