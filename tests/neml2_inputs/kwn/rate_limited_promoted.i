# RateLimitedPrecipitateGrowthRate: variables give every parameter, the radius with the
# size-bin axis; named variables
[Settings]
  [example_batch_shape]
    R = '(4; 3)'
  []
[]
[Models]
  [model]
    type = RateLimitedPrecipitateGrowthRate
    current_concentration = 'x'
    growth_rate = 'R_dot'
    radius = 'R'
    equilibrium_concentration = 'x_eq'
    concentration_difference = 'dx'
    diffusivity = 'D'
  []
[]
