# The bilinear traction-separation law at three openings (below the onset, softening,
# separated) and one closing, each from a slightly and a half-damaged history
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Scalar_names = 'effective_separation normal_separation tangential_separation_1 tangential_separation_2 damage~1'
    input_Scalar_values = 'delta dn ds1 ds2 d_old'
    output_Vec_names = 'traction'
    output_Vec_values = 'traction_expected'
    output_Scalar_names = 'damage'
    output_Scalar_values = 'damage_expected'
    derivative_abs_tol = 1e-6
  []
[]

[Tensors]
  [delta]
    type = Python
    expr = 'Scalar(torch.tensor([0.002, 0.012, 0.06, 0.004], dtype=torch.float64))'
  []
  [dn]
    type = Python
    expr = 'Scalar(torch.tensor([0.0015, 0.01, 0.05, -0.003], dtype=torch.float64))'
  []
  [ds1]
    type = Python
    expr = 'Scalar(torch.tensor([0.001, -0.006, 0.03, 0.002], dtype=torch.float64))'
  []
  [ds2]
    type = Python
    expr = 'Scalar(torch.tensor([-0.0008, 0.002, 0.01, 0.001], dtype=torch.float64))'
  []
  [d_old]
    type = Python
    expr = 'Scalar(torch.tensor([[0.1], [0.5]], dtype=torch.float64))'
  []
  [traction_expected]
    type = Python
    expr = 'Vec(torch.tensor([[[6.75, 4.5, -3.6], [29.166666666666664, -17.5, 5.833333333333333], [0.0, 0.0, 0.0], [-13.5, 9.0, 4.5]], [[3.75, 2.5, -2.0], [25.0, -15.0, 5.0], [0.0, 0.0, 0.0], [-7.5, 5.0, 2.5]]], dtype=torch.float64))'
  []
  [damage_expected]
    type = Python
    expr = 'Scalar(torch.tensor([[0.1, 0.4166666666666667, 1.0, 0.1], [0.5, 0.5, 1.0, 0.5]], dtype=torch.float64))'
  []
[]

[Models]
  [model]
    type = BilinearTraction
    penalty_stiffness = 5e3
    critical_separation = 0.008
    full_separation = 0.04
  []
[]
