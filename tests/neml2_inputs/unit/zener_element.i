# A Zener (standard linear solid) element: stress and viscous strain rate
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_SR2_names = 'strain viscous_strain'
    input_SR2_values = 'eps eps_v'
    output_SR2_names = 'stress viscous_strain_rate'
    output_SR2_values = 'stress_expected rate_expected'
  []
[]

[Tensors]
  [eps]
    type = Python
    expr = 'SR2(torch.tensor([[2e-3, -5e-4, -5e-4, 1e-4, 0.0, 3e-4], [-1e-3, 4e-4, 2e-4, 0.0, 6e-4, -2e-4]], dtype=torch.float64))'
  []
  [eps_v]
    type = Python
    expr = 'SR2(torch.tensor([[5e-4, -1e-4, -2e-4, 0.0, 1e-4, 0.0], [1e-4, 1e-4, -3e-4, 2e-4, 0.0, 0.0]], dtype=torch.float64))'
  []
  [stress_expected]
    type = Python
    expr = 'SR2(torch.tensor([[7.8, -1.98, -1.86, 0.42, -0.12000000000000001, 1.2599999999999998], [-4.32, 1.56, 1.2, -0.24000000000000002, 2.5199999999999996, -0.84]], dtype=torch.float64))'
  []
  [rate_expected]
    type = Python
    expr = 'SR2(torch.tensor([[0.004, -0.0010666666666666667, -0.0008000000000000001, 0.0002666666666666667, -0.0002666666666666667, 0.0007999999999999999], [-0.0029333333333333334, 0.0008000000000000001, 0.0013333333333333333, -0.0005333333333333334, 0.0015999999999999999, -0.0005333333333333334]], dtype=torch.float64))'
  []
[]

[Models]
  [model]
    type = ZenerElement
    equilibrium_modulus = 3000
    maxwell_modulus = 1200
    maxwell_viscosity = 450
  []
[]
