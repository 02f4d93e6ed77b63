# DumpInSmallestBin: the default names (the output is 'state/dumped_source'), five bins
[Tensors]
  [centers]
    type = Python
    expr = 'Scalar(torch.tensor([0.2, 0.6, 1.0, 1.4, 1.8], dtype=torch.float64))'
  []
[]
[Models]
  [model]
    type = DumpInSmallestBin
    cell_centers = centers
  []
[]
