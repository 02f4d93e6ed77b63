# SFFKPrecipitationGrowthRate: three size bins, a radius per bin
[Tensors]
  [bins]
    type = Python
    expr = 'Scalar(torch.tensor([1.0e-9, 3.0e-9, 9.0e-9], dtype=torch.float64))'
  []
[]
[Models]
  [model]
    type = SFFKPrecipitationGrowthRate
    radius = 'bins'
    gibbs_free_energy_difference = 4.0e3
    gas_constant = 8.314
  []
[]
