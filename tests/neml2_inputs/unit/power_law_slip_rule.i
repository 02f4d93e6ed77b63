# Power-law slip rates of the 12 slip systems of two points
[Settings]
  [example_batch_shape]
    resolved_shears = '(2; 12)'
    slip_strengths = '(2; 12)'
  []
[]

[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Scalar_names = 'resolved_shears slip_strengths'
    input_Scalar_values = 'tau tau_bar'
    output_Scalar_names = 'slip_rates'
    output_Scalar_values = 'rates_expected'
  []
[]

[Tensors]
  [tau]
    type = Python
    expr = 'Scalar(torch.linspace(-90.0, 120.0, 24, dtype=torch.float64).reshape(2, 12))'
  []
  [tau_bar]
    type = Python
    expr = 'Scalar(torch.linspace(60.0, 110.0, 24, dtype=torch.float64).reshape(2, 12))'
  []
  [rates_expected]
    type = Python
    expr = 'Scalar(torch.tensor([[-0.027901219101389638, -0.01104536036153165, -0.0040548471045643245, -0.0013486271360399434, -0.00039277347837447096, -9.499739219510168e-05, -1.744505275642911e-05, -2.0498092699029324e-06, -1.0356664944741269e-07, -5.680272826273214e-10, 4.171498878185889e-15, 2.6078376931446704e-09], [1.3139765012468523e-07, 1.3469185379427402e-06, 6.9261749997772894e-06, 2.4200090159097655e-05, 6.60535105712358e-05, 0.00015192931148842194, 0.0003082678317181913, 0.0005684267343693, 0.0009721811523137714, 0.001564920538640495, 0.002396653463352494, 0.003520915816782272]], dtype=torch.float64))'
  []
[]

[Models]
  [model]
    type = PowerLawSlipRule
    gamma0 = 2e-3
    n = 6.5
  []
[]
