# SR2Invariant: EFFECTIVE_STRAIN
[Models]
  [model]
    type = SR2Invariant
    invariant_type = 'EFFECTIVE_STRAIN'
    tensor = 'A'
    invariant = 'a'
  []
[]
