# BrooksCoreyCapillaryPressure: the threshold pressure given by a variable
[Models]
  [model]
    type = BrooksCoreyCapillaryPressure
    threshold_pressure = 'entry_pressure'
    exponent = 1.5
  []
[]
