# VanGenuchtenCapillaryPressure: both shape parameters given by variables, with the
# logarithmic extension below 0.1
[Models]
  [model]
    type = VanGenuchtenCapillaryPressure
    a = 'vg_a'
    m = 'vg_m'
    log_extension = true
    transition_saturation = 0.1
  []
[]
