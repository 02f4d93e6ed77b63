# SemiInfiniteCoordinateTransform: the default names (the output is 'state/x_hat')
[Models]
  [model]
    type = SemiInfiniteCoordinateTransform
    shift = 2.5
  []
[]
