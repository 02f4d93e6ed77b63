# ScalarLinearInterpolation: two points, a named output, the default argument name
[Tensors]
  [X]
    type = Python
    expr = 'torch.tensor([-1.0, 2.0], dtype=torch.float64)'
  []
  [Y]
    type = Python
    expr = 'torch.tensor([4.0, -0.5], dtype=torch.float64)'
  []
[]
[Models]
  [model]
    type = ScalarLinearInterpolation
    output = 'y'
    abscissa = 'X'
    ordinate = 'Y'
  []
[]
