# eigenstrain = ((V / V0)^(1/3) - 1) I
[Models]
  [model]
    type = VolumeChangeEigenstrain
    reference_volume = 2.5
  []
[]
