# ScalarPNorm: the default output name and unit weights
[Models]
  [model]
    type = ScalarPNorm
    from = 'x y'
    exponent = 2
  []
[]
