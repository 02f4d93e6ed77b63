# J = 1 + a c f + (1 - c) f dO, a quarter liquid
[Models]
  [model]
    type = SwellingAndPhaseChangeDeformationJacobian
    phase_fraction = 0.25
    swelling_coefficient = 0.09
    reference_volume_difference = -0.04
  []
[]
