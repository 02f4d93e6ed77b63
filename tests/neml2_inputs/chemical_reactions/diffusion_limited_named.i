# DiffusionLimitedReaction: named variables, a thicker dummy product layer
[Models]
  [model]
    type = DiffusionLimitedReaction
    product_inner_radius = 'ri'
    solid_inner_radius = 'ro'
    liquid_reactivity = 'Rl'
    solid_reactivity = 'Rs'
    reaction_rate = 'rate'
    diffusion_coefficient = 4e-2
    molar_volume = 0.7
    product_dummy_thickness = 0.05
  []
[]
