# SlopeSaturationVoceIsotropicHardening softening to a negative saturation (sign(R) = -1)
[Models]
  [model]
    type = SlopeSaturationVoceIsotropicHardening
    saturated_hardening = -80
    initial_hardening_rate = 900
  []
[]
