# A fluid-swollen solid: the effective saturation of the fluid sets the capillary
# pressure (Brooks-Corey, extended logarithmically below Se = 0.05) and swells the
# solid, Js = 1 + a c f + (1 - c) f dO, which scales the advective stress
# -c / (3 Js^(5/3)) P : F
[Models]
  [saturation]
    type = EffectiveSaturation
    residual_saturation = 0.1
    max_fraction = 0.5
  []
  [capillary]
    type = BrooksCoreyCapillaryPressure
    threshold_pressure = 5e3
    exponent = 2
    log_extension = true
    transition_saturation = 0.05
  []
  [swelling]
    type = SwellingAndPhaseChangeDeformationJacobian
    phase_fraction = 0.2
    swelling_coefficient = 0.15
    reference_volume_difference = 0.05
    jacobian = js
  []
  [advective]
    type = AdvectiveStress
    js = js
    coefficient = 1.2
  []
  [model]
    type = ComposedModel
    models = 'saturation capillary swelling advective'
    additional_outputs = 'effective_saturation js'
  []
[]
