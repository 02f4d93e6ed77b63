# A point-by-point model on a sub-batched input: one von Mises stress per grain
[Settings]
  [example_batch_shape]
    S = '(2; 3)'
  []
[]
[Models]
  [model]
    type = SR2Invariant
    invariant_type = 'VONMISES'
    tensor = 'S'
    invariant = 's'
  []
[]
