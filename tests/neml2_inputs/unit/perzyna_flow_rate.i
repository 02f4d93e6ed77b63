# A J2 flow rate: von Mises stress of the Mandel stress, yield function with isotropic
# hardening, Perzyna's power law, composed
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_SR2_names = 'mandel_stress'
    input_SR2_values = 'M'
    input_Scalar_names = 'isotropic_hardening'
    input_Scalar_values = 'h'
    output_Scalar_names = 'flow_rate'
    output_Scalar_values = 'rate_expected'
    derivative_rel_tol = 1e-6
  []
[]

[Tensors]
  [M]
    type = Python
    expr = 'SR2(torch.tensor([[220.0, -40.0, 15.0, 30.0, -12.0, 8.0], [160.0, 90.0, -70.0, 0.0, 45.0, -20.0]], dtype=torch.float64))'
  []
  [h]
    type = Python
    expr = 'Scalar(torch.tensor([12.0, 30.0], dtype=torch.float64))'
  []
  [rate_expected]
    type = Python
    expr = 'Scalar(torch.tensor([0.4198017428557357, 0.0965613949230576], dtype=torch.float64))'
  []
[]

[Models]
  [vonmises]
    type = SR2Invariant
    invariant_type = 'VONMISES'
    tensor = 'mandel_stress'
    invariant = 'effective_stress'
  []
  [surface]
    type = YieldFunction
    yield_stress = 95
    isotropic_hardening = 'isotropic_hardening'
  []
  [flow]
    type = PerzynaPlasticFlowRate
    reference_stress = 140
    exponent = 3.5
  []
  [model]
    type = ComposedModel
    models = 'vonmises surface flow'
  []
[]
