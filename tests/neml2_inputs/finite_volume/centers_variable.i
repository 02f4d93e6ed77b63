# SmearedDeltaSource: a variable gives the cell centers, one per cell; NEML2 3.1.0 cannot
# evaluate this one
[Settings]
  [example_batch_shape]
    xc = '(3; 4)'
  []
[]
[Models]
  [model]
    type = SmearedDeltaSource
    width = 0.5
    cell_centers = xc
  []
[]
