# PrecipitateVolumeFraction: four size bins, a radius per bin
[Settings]
  [example_batch_shape]
    number_density = '(3; 4)'
  []
[]
[Tensors]
  [bins]
    type = Python
    expr = 'Scalar(torch.tensor([0.5e-9, 1.0e-9, 2.0e-9, 4.0e-9], dtype=torch.float64))'
  []
[]
[Models]
  [model]
    type = PrecipitateVolumeFraction
    radius = 'bins'
  []
[]
