# Per-grain strains shifted by a shared one, averaged over the grains, then an invariant
[Settings]
  [example_batch_shape]
    eg = '(2; 3)'
  []
[]
[Models]
  [shift]
    type = SR2LinearCombination
    from = 'eg e0'
    to = 'e'
    weights = '2 -0.5'
  []
  [average]
    type = SR2IntermediateMean
    from = 'e'
    to = 'ebar'
    reduces = 'grain'
  []
  [invariant]
    type = SR2Invariant
    invariant_type = 'EFFECTIVE_STRAIN'
    tensor = 'ebar'
    invariant = 'ep'
  []
  [model]
    type = ComposedModel
    models = 'shift average invariant'
    additional_outputs = 'e'
  []
[]
