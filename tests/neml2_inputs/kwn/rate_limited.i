# RateLimitedPrecipitateGrowthRate: three size bins, a radius per bin
[Tensors]
  [bins]
    type = Python
    expr = 'Scalar(torch.tensor([1.0e-9, 3.0e-9, 9.0e-9], dtype=torch.float64))'
  []
[]
[Models]
  [model]
    type = RateLimitedPrecipitateGrowthRate
    radius = 'bins'
    equilibrium_concentration = 2.0e-3
    concentration_difference = 0.25
    diffusivity = 1.5e-18
  []
[]
