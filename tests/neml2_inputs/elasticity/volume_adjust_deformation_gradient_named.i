[Models]
  [model]
    type = VolumeAdjustDeformationGradient
    input = F
    jacobian = J
    output = Fe
  []
[]
