# SmearedDeltaSource: named variables and a variable gives the width; NEML2 3.1.0 cannot
# evaluate this one
[Tensors]
  [centers]
    type = Python
    expr = 'Scalar(torch.tensor([0.1, 0.5, 1.2, 2.0, 3.1, 4.5], dtype=torch.float64))'
  []
[]
[Models]
  [model]
    type = SmearedDeltaSource
    magnitude = rate
    location = radius
    smeared_source = source
    width = w
    cell_centers = centers
  []
[]
