# Chaboche's kinematic hardening rate with static recovery
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_SR2_names = 'back_stress flow_direction'
    input_SR2_values = 'X N'
    input_Scalar_names = 'flow_rate'
    input_Scalar_values = 'rate'
    output_SR2_names = 'back_stress_rate'
    output_SR2_values = 'Xdot_expected'
  []
[]

[Tensors]
  [X]
    type = Python
    expr = 'SR2(torch.tensor([[20.0, -5.0, -15.0, 4.0, 2.0, -1.0], [-8.0, 12.0, -4.0, 0.5, -3.0, 6.0]], dtype=torch.float64))'
  []
  [N]
    type = Python
    expr = 'SR2(torch.tensor([[0.6, -0.2, -0.4, 0.3, 0.1, 0.0], [-0.3, 0.5, -0.2, 0.0, -0.4, 0.2]], dtype=torch.float64))'
  []
  [rate]
    type = Python
    expr = 'Scalar(torch.tensor([2e-3, 5e-4], dtype=torch.float64))'
  []
  [Xdot_expected]
    type = Python
    expr = 'SR2(torch.tensor([[4.797363232204182, -1.7993408080510456, -2.9980224241531364, 3.1194726464408364, 0.9597363232204181, 0.1201318383897909], [-0.6594682508908789, 1.1392023763363186, -0.4797341254454394, -0.015033234319320066, -1.1098005940840796, 0.41960118816815917]], dtype=torch.float64))'
  []
[]

[Models]
  [model]
    type = ChabochePlasticHardening
    C = 9000
    g = 60
    A = 1e-6
    a = 2.5
  []
[]
