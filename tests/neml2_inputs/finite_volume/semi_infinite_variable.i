# SemiInfiniteCoordinateTransform: a variable gives the shift; NEML2 3.1.0 cannot
# evaluate this one
[Models]
  [model]
    type = SemiInfiniteCoordinateTransform
    coordinate = r
    transformed_coordinate = r_hat
    shift = s
  []
[]
