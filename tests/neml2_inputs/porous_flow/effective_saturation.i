# EffectiveSaturation: the default names
[Models]
  [model]
    type = EffectiveSaturation
    residual_saturation = 0.12
    max_fraction = 0.85
  []
[]
