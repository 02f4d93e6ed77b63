# FiniteVolumeGradient: a variable gives the prefactor, one value per point
[Settings]
  [example_batch_shape]
    u = '(3; 5)'
  []
[]
[Models]
  [model]
    type = FiniteVolumeGradient
    dx = -0.4
    prefactor = k
  []
[]
