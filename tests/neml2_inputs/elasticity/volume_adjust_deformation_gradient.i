# F_e = J^(-1/3) F
[Models]
  [model]
    type = VolumeAdjustDeformationGradient
  []
[]
