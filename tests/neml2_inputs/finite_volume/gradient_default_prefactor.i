# FiniteVolumeGradient: named variables, the prefactor left at its default (1), the
# spacing a [Tensors] block
[Settings]
  [example_batch_shape]
    c = '(3; 4)'
  []
[]
[Tensors]
  [h]
    type = Python
    expr = 'Scalar(0.2)'
  []
[]
[Models]
  [model]
    type = FiniteVolumeGradient
    u = c
    grad_u = dc
    dx = h
  []
[]
