# ScalarPNorm: one weight for every input and a fractional exponent
[Models]
  [model]
    type = ScalarPNorm
    from = 'p q r'
    to = 's'
    exponent = 1.5
    weights = '0.75'
  []
[]
