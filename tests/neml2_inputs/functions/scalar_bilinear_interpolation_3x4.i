# ScalarBilinearInterpolation: a 3 x 4 grid (NEML2 3.1.0 computes its values but not its Jacobian)
[Tensors]
  [X1]
    type = Python
    expr = 'torch.tensor([0.0, 1.0, 3.0], dtype=torch.float64)'
  []
  [X2]
    type = Python
    expr = 'torch.tensor([-1.0, 0.5, 2.0, 4.0], dtype=torch.float64)'
  []
  [Y]
    type = Python
    expr = 'torch.sin(torch.arange(1, 13, dtype=torch.float64)).reshape(3, 4) * 10.0 + 1.0'
  []
[]
[Models]
  [model]
    type = ScalarBilinearInterpolation
    argument1 = 'temperature'
    argument2 = 'strain_rate'
    abscissa1 = 'X1'
    abscissa2 = 'X2'
    ordinate = 'Y'
  []
[]
