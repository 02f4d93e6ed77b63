# IrreversibleScalar: a damage-like ratchet
[Models]
  [model]
    type = IrreversibleScalar
    from = 'd_trial'
    to = 'd'
  []
[]
