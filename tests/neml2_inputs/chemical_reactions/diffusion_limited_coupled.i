# DiffusionLimitedReaction: the diffusion coefficient given by a variable
[Models]
  [model]
    type = DiffusionLimitedReaction
    diffusion_coefficient = 'D'
    molar_volume = 1.5
  []
[]
