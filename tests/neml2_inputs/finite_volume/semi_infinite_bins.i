# SemiInfiniteCoordinateTransform: named variables, one coordinate per bin
[Settings]
  [example_batch_shape]
    r = '(3; 4)'
  []
[]
[Models]
  [model]
    type = SemiInfiniteCoordinateTransform
    coordinate = r
    transformed_coordinate = r_hat
    shift = 0.8
  []
[]
