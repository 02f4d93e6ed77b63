# EffectiveSaturation: named variables, the maximum fraction given by a variable
[Models]
  [model]
    type = EffectiveSaturation
    fluid_fraction = 'phi_f'
    effective_saturation = 'Se'
    residual_saturation = 0.05
    max_fraction = 'phi_max'
  []
[]
