# SR2BilinearInterpolation: a 3 x 3 grid, unevenly spaced
[Tensors]
  [X1]
    type = Python
    expr = 'torch.tensor([0.0, 1.0, 3.0], dtype=torch.float64)'
  []
  [X2]
    type = Python
    expr = 'torch.tensor([-1.0, 0.5, 4.0], dtype=torch.float64)'
  []
  [Y]
    type = Python
    expr = 'torch.sin(torch.arange(1, 55, dtype=torch.float64)).reshape(3, 3, 6) * 10.0 + 1.0'
  []
[]
[Models]
  [model]
    type = SR2BilinearInterpolation
    argument1 = 'temperature'
    argument2 = 'strain_rate'
    abscissa1 = 'X1'
    abscissa2 = 'X2'
    ordinate = 'Y'
  []
[]
