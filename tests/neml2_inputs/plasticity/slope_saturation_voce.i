# SlopeSaturationVoceIsotropicHardening with its variables renamed
[Models]
  [model]
    type = SlopeSaturationVoceIsotropicHardening
    flow_rate = 'gamma_dot'
    isotropic_hardening = 'k'
    isotropic_hardening_rate = 'k_dot'
    saturated_hardening = 120
    initial_hardening_rate = 1500
  []
[]
