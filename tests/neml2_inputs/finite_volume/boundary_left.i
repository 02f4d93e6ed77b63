# FiniteVolumeAppendBoundaryCondition: the default side (left) and output name
# (<input>_with_bc_left)
[Settings]
  [example_batch_shape]
    J = '(3; 4)'
  []
[]
[Models]
  [model]
    type = FiniteVolumeAppendBoundaryCondition
    input = J
    bc_value = 0.75
  []
[]
