# GreenLagrangeStrain of two deformation gradients
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_R2_names = 'F'
    input_R2_values = 'F'
    output_SR2_names = 'E'
    output_SR2_values = 'E_expected'
    derivative_abs_tol = 1e-7
  []
[]

[Tensors]
  [F]
    type = Python
    expr = 'R2(torch.tensor([[[1.02, 0.01, -0.03], [0.02, 0.97, 0.05], [0.0, -0.04, 1.1]], [[0.9, 0.2, 0.0], [-0.1, 1.05, 0.03], [0.06, 0.0, 0.99]]], dtype=torch.float64))'
  []
  [E_expected]
    type = Python
    expr = 'SR2(torch.tensor([[0.020399999999999974, -0.028700000000000003, 0.10670000000000013, 0.0029698484809834967, -0.020930360723121808, 0.020930360723121808], [-0.08819999999999995, 0.07125000000000004, -0.009500000000000008, 0.022273863607376248, 0.03988082245892128, 0.05303300858899108]], dtype=torch.float64))'
  []
[]

[Models]
  [model]
    type = GreenLagrangeStrain
    deformation_gradient = 'F'
    strain = 'E'
  []
[]
