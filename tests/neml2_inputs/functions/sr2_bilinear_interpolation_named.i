# SR2BilinearInterpolation: a 2 x 2 grid, a named output, the default argument names
[Tensors]
  [X1]
    type = Python
    expr = 'torch.tensor([1.0, 2.0], dtype=torch.float64)'
  []
  [X2]
    type = Python
    expr = 'torch.tensor([0.0, 5.0], dtype=torch.float64)'
  []
  [Y]
    type = Python
    expr = 'torch.cos(torch.arange(24, dtype=torch.float64)).reshape(2, 2, 6)'
  []
[]
[Models]
  [model]
    type = SR2BilinearInterpolation
    output = 'S'
    abscissa1 = 'X1'
    abscissa2 = 'X2'
    ordinate = 'Y'
  []
[]
