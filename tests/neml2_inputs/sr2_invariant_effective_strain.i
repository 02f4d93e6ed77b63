# SR2Invariant, effective strain
[Models]
  [model]
    type = SR2Invariant
    invariant_type = 'EFFECTIVE_STRAIN'
    tensor = 'E'
    invariant = 'e'
  []
[]
