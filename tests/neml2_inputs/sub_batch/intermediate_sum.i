# The sum over the grains of a per-grain stress
[Settings]
  [example_batch_shape]
    stress_grain = '(2; 4)'
  []
[]
[Models]
  [model]
    type = SR2IntermediateSum
    from = 'stress_grain'
    to = 'stress'
    reduces = 'grain'
  []
[]
