# ScalarLinearInterpolation: a table of five points, unevenly spaced
[Tensors]
  [T_table]
    type = Python
    expr = 'torch.tensor([300.0, 350.0, 420.0, 500.0, 650.0], dtype=torch.float64)'
  []
  [E_table]
    type = Python
    expr = 'torch.tensor([2.1e5, 2.05e5, 1.96e5, 1.9e5, 1.71e5], dtype=torch.float64)'
  []
[]
[Models]
  [model]
    type = ScalarLinearInterpolation
    argument = 'T'
    abscissa = 'T_table'
    ordinate = 'E_table'
  []
[]
