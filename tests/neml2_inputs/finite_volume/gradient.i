# FiniteVolumeGradient: the default names, a uniform prefactor and spacing, six cells
[Settings]
  [example_batch_shape]
    u = '(3; 6)'
  []
[]
[Models]
  [model]
    type = FiniteVolumeGradient
    dx = 0.25
    prefactor = 1.5
  []
[]
