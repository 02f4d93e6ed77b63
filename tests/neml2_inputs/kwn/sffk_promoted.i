# SFFKPrecipitationGrowthRate: variables give the radius (with the size-bin axis), the
# driving force (either sign) and the gas constant
[Settings]
  [example_batch_shape]
    R = '(4; 2)'
  []
[]
[Models]
  [model]
    type = SFFKPrecipitationGrowthRate
    radius = 'R'
    gibbs_free_energy_difference = 'dg'
    gas_constant = 'Rg'
  []
[]
