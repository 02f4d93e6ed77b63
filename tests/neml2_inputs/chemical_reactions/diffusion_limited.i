# DiffusionLimitedReaction: the default names and dummy thickness
[Models]
  [model]
    type = DiffusionLimitedReaction
    diffusion_coefficient = 1e-3
    molar_volume = 2.5
  []
[]
