# all liquid (the swelling term alone), the variables renamed
[Models]
  [model]
    type = SwellingAndPhaseChangeDeformationJacobian
    phase_fraction = 1
    swelling_coefficient = 0.12
    reference_volume_difference = 0.05
    fluid_fraction = phi
    jacobian = J_swell
  []
[]
