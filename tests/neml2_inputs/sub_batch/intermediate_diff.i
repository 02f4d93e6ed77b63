# Second differences along the second of two sub-batch axes
[Settings]
  [example_batch_shape]
    a = '(2; 2, 5)'
  []
[]
[Models]
  [model]
    type = SR2IntermediateDiff
    from = 'a'
    to = 'b'
    dim = -1
    n = 2
    reduces = 'cell'
  []
[]
