# VanGenuchtenCapillaryPressure: no logarithmic extension (the default)
[Models]
  [model]
    type = VanGenuchtenCapillaryPressure
    a = 3.2e3
    m = 0.45
  []
[]
