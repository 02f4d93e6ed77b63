# SR2Invariant: I1
[Models]
  [model]
    type = SR2Invariant
    invariant_type = 'I1'
    tensor = 'A'
    invariant = 'a'
  []
[]
