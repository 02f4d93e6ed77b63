# BrooksCoreyCapillaryPressure: named variables, the logarithmic extension below 0.15,
# the threshold pressure a [Tensors] block
[Tensors]
  [Pt]
    type = Python
    expr = 'Scalar(1.2e4)'
  []
[]
[Models]
  [model]
    type = BrooksCoreyCapillaryPressure
    effective_saturation = 'S'
    capillary_pressure = 'Pc'
    threshold_pressure = Pt
    exponent = 2.4
    log_extension = true
    transition_saturation = 0.15
  []
[]
