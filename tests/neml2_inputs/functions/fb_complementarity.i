# FBComplementarity: the default inequalities (a LE, b GE)
[Models]
  [model]
    type = FBComplementarity
    a = 'f'
    b = 'dgamma'
    complementarity = 'r'
  []
[]
