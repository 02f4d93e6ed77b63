# ScalarPNorm: three inputs, a weight each, a cubic norm
[Models]
  [model]
    type = ScalarPNorm
    from = 'a b c'
    to = 'norm'
    exponent = 3
    weights = '2 0.5 1.25'
  []
[]
