# SR2Invariant: VONMISES
[Models]
  [model]
    type = SR2Invariant
    invariant_type = 'VONMISES'
    tensor = 'A'
    invariant = 'a'
  []
[]
