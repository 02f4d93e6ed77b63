# FiniteVolumeUpwindedAdvectiveFlux: the default names, five cells, four interior edges
[Settings]
  [example_batch_shape]
    u = '(3; 5)'
    v_edge = '(3; 4)'
  []
[]
[Models]
  [model]
    type = FiniteVolumeUpwindedAdvectiveFlux
  []
[]
