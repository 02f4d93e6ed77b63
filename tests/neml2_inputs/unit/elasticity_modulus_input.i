# LinearIsotropicElasticity whose Young's modulus is an input variable ('youngs_modulus'),
# one modulus per point, broadcast against one strain
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_SR2_names = 'strain'
    input_SR2_values = 'eps'
    input_Scalar_names = 'youngs_modulus'
    input_Scalar_values = 'E'
    output_SR2_names = 'stress'
    output_SR2_values = 'stress_expected'
    derivative_abs_tol = 1e-6
  []
[]

[Tensors]
  [eps]
    type = Python
    expr = 'SR2.fill(1e-3, -2e-4, 5e-4, 3e-4, 0.0, -1e-4, dtype=torch.float64)'
  []
  [E]
    type = Python
    expr = 'Scalar(torch.tensor([1.5e5, 2.1e5, 7.0e4], dtype=torch.float64))'
  []
  [stress_expected]
    type = Python
    expr = 'SR2(torch.tensor([[235.93812776215344, 98.5335476094817, 178.68621936520688, 48.57985519602234, 0.0, -16.19328506534078], [330.3133788670149, 137.9469666532744, 250.16070711128967, 68.01179727443127, 0.0, -22.670599091477094], [110.10445962233828, 45.98232221775814, 83.3869023704299, 22.670599091477094, 0.0, -7.556866363825698]], dtype=torch.float64))'
  []
[]

[Models]
  [model]
    type = LinearIsotropicElasticity
    coefficients = 'youngs_modulus 0.31'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
