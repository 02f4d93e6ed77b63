# VoceIsotropicHardening
[Models]
  [model]
    type = VoceIsotropicHardening
    saturated_hardening = 100
    saturation_rate = 1.2
  []
[]
