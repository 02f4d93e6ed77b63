# FiniteVolumeGradient: a variable gives the prefactor, one value per interior edge
# (a diffusivity at the edges)
[Settings]
  [example_batch_shape]
    u = '(3; 5)'
    D = '(3; 4)'
  []
[]
[Models]
  [model]
    type = FiniteVolumeGradient
    dx = 0.5
    prefactor = D
  []
[]
