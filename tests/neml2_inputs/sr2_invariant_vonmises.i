# SR2Invariant, von Mises
[Models]
  [model]
    type = SR2Invariant
    invariant_type = 'VONMISES'
    tensor = 'S'
    invariant = 's'
  []
[]
