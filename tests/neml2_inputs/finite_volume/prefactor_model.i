# FiniteVolumeGradient: the prefactor is the output of another model, a diffusivity
# interpolated to the interior edges, which the composition brings in
[Settings]
  [example_batch_shape]
    u = '(3; 4)'
    D = '(3; 4)'
  []
[]
[Tensors]
  [centers]
    type = Python
    expr = 'Scalar(torch.tensor([0.5, 1.5, 2.5, 3.5], dtype=torch.float64))'
  []
  [edges]
    type = Python
    expr = 'Scalar(torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0], dtype=torch.float64))'
  []
[]
[Models]
  [diffusivity]
    type = LinearlyInterpolateToCellEdges
    cell_values = D
    cell_centers = centers
    cell_edges = edges
  []
  [gradient]
    type = FiniteVolumeGradient
    dx = 1.0
    prefactor = diffusivity
  []
  [model]
    type = ComposedModel
    models = 'gradient'
  []
[]
