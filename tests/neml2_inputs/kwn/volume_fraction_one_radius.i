# PrecipitateVolumeFraction: one radius for every bin; named variables
[Settings]
  [example_batch_shape]
    n = '(3; 5)'
  []
[]
[Models]
  [model]
    type = PrecipitateVolumeFraction
    number_density = 'n'
    volume_fraction = 'f'
    radius = 2.5e-9
  []
[]
