# VanGenuchtenCapillaryPressure: named variables, the logarithmic extension below 0.2
[Models]
  [model]
    type = VanGenuchtenCapillaryPressure
    effective_saturation = 'S'
    capillary_pressure = 'Pc'
    a = 850
    m = 0.62
    log_extension = true
    transition_saturation = 0.2
  []
[]
