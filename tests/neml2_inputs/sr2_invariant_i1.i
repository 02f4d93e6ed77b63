# SR2Invariant, first invariant
[Models]
  [model]
    type = SR2Invariant
    invariant_type = 'I1'
    tensor = 'S'
    invariant = 'p'
  []
[]
