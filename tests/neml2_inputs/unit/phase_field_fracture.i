# Phase-field fracture: both degradation functions and both crack geometric functions of
# the phase, and the strain energy split into its active and inactive parts (VOLDEV: a
# compressed volume, the second point, is inactive); the first point is intact (d = 0)
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Scalar_names = 'phase'
    input_Scalar_values = 'd'
    input_SR2_names = 'strain'
    input_SR2_values = 'eps'
    output_Scalar_names = 'g_rational g_power alpha_at1 alpha_at2 active_strain_energy_density inactive_strain_energy_density'
    output_Scalar_values = 'g_rational_expected g_power_expected alpha_at1_expected alpha_at2_expected psi_active_expected psi_inactive_expected'
  []
[]

[Tensors]
  [d]
    type = Python
    expr = 'Scalar(torch.tensor([0.0, 0.3, 0.7], dtype=torch.float64))'
  []
  [eps]
    type = Python
    expr = 'SR2(torch.tensor([[0.001, -0.0002, 0.0003, 0.0001, 0.0, 0.0002], [-0.002, -0.001, -0.0005, 0.0003, -0.0001, 0.0], [0.0005, 0.0005, 0.0005, 0.0, 0.0, 0.0]], dtype=torch.float64))'
  []
  [g_rational_expected]
    type = Python
    expr = 'Scalar(torch.tensor([1.0, 0.5616484240687679, 0.11659320388349519], dtype=torch.float64))'
  []
  [g_power_expected]
    type = Python
    expr = 'Scalar(torch.tensor([1.0, 0.4900509999999999, 0.09009100000000003], dtype=torch.float64))'
  []
  [alpha_at1_expected]
    type = Python
    expr = 'Scalar(torch.tensor([0.0, 0.3, 0.7], dtype=torch.float64))'
  []
  [alpha_at2_expected]
    type = Python
    expr = 'Scalar(torch.tensor([0.0, 0.09, 0.48999999999999994], dtype=torch.float64))'
  []
  [psi_active_expected]
    type = Python
    expr = 'Scalar(torch.tensor([0.16860576923076925, 0.10230769230769231, 0.196875], dtype=torch.float64))'
  []
  [psi_inactive_expected]
    type = Python
    expr = 'Scalar(torch.tensor([0.0, 1.0718750000000001, 0.0], dtype=torch.float64))'
  []
[]

[Models]
  [rational]
    type = RationalDegradationFunction
    degradation = 'g_rational'
    power = 2
    b1 = 1.5
    b2 = -0.5
    b3 = 0
    eta = 1e-4
  []
  [power]
    type = PowerDegradationFunction
    degradation = 'g_power'
    power = 2
    eta = 1e-4
  []
  [at1]
    type = CrackGeometricFunctionAT1
    crack = 'alpha_at1'
  []
  [at2]
    type = CrackGeometricFunctionAT2
    crack = 'alpha_at2'
  []
  [energy]
    type = LinearIsotropicStrainEnergyDensity
    coefficients = '2.1e5 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    decomposition = 'VOLDEV'
  []
  [model]
    type = ComposedModel
    models = 'rational power at1 at2 energy'
  []
[]
