# BrooksCoreyCapillaryPressure: no logarithmic extension (the default)
[Models]
  [model]
    type = BrooksCoreyCapillaryPressure
    threshold_pressure = 2.5e3
    exponent = 1.8
  []
[]
