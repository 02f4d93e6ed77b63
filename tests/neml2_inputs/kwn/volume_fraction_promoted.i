# PrecipitateVolumeFraction: a variable with the size-bin axis gives the radius
[Settings]
  [example_batch_shape]
    number_density = '(3; 3)'
    R = '(3; 3)'
  []
[]
[Models]
  [model]
    type = PrecipitateVolumeFraction
    radius = 'R'
  []
[]
