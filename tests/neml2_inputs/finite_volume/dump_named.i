# DumpInSmallestBin: named variables, a single bin
[Tensors]
  [centers]
    type = Python
    expr = 'Scalar(torch.tensor([0.3], dtype=torch.float64))'
  []
[]
[Models]
  [model]
    type = DumpInSmallestBin
    magnitude = nucleation_rate
    dumped_source = source
    cell_centers = centers
  []
[]
