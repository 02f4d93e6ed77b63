# the reference volume from a [Tensors] block, the variables renamed
[Tensors]
  [V0]
    type = Python
    expr = 'Scalar(0.8)'
  []
[]
[Models]
  [model]
    type = VolumeChangeEigenstrain
    reference_volume = V0
    volume = cell_volume
    eigenstrain = swelling_strain
  []
[]
