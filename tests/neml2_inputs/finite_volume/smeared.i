# SmearedDeltaSource: the default names (the output is 'state/smeared_source'), six
# unevenly spaced cell centers
[Tensors]
  [centers]
    type = Python
    expr = 'Scalar(torch.tensor([0.1, 0.5, 1.2, 2.0, 3.1, 4.5], dtype=torch.float64))'
  []
[]
[Models]
  [model]
    type = SmearedDeltaSource
    width = 0.6
    cell_centers = centers
  []
[]
