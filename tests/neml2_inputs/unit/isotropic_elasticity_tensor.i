# IsotropicElasticityTensor from a bulk and a shear modulus: a model without inputs,
# checked for its value and its derivatives with respect to K and G
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    output_SSR4_names = 'C'
    output_SSR4_values = 'C_expected'
    parameter_derivative_rel_tol = 1e-6
  []
[]

[Tensors]
  [C_expected]
    type = Python
    expr = 'SSR4(torch.tensor([[256000.0, 112000.0, 112000.0, 0.0, 0.0, 0.0], [112000.0, 256000.0, 112000.0, 0.0, 0.0, 0.0], [112000.0, 112000.0, 256000.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 144000.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 144000.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 144000.0]], dtype=torch.float64))'
  []
[]

[Models]
  [model]
    type = IsotropicElasticityTensor
    coefficients = '1.6e5 7.2e4'
    coefficient_types = 'BULK_MODULUS SHEAR_MODULUS'
    C = 'C'
  []
[]
