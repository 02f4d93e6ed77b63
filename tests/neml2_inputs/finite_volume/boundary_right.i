# FiniteVolumeAppendBoundaryCondition: the right side, a named output, the value a
# [Tensors] block
[Settings]
  [example_batch_shape]
    J = '(3; 4)'
  []
[]
[Tensors]
  [outflow]
    type = Python
    expr = 'Scalar(-1.25)'
  []
[]
[Models]
  [model]
    type = FiniteVolumeAppendBoundaryCondition
    input = J
    output = J_full
    side = right
    bc_value = outflow
  []
[]
