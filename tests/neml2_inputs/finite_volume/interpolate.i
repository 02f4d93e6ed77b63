# LinearlyInterpolateToCellEdges: a variable gives the cell values; cells of unequal
# widths whose centers are not midway between their edges
[Settings]
  [example_batch_shape]
    q = '(3; 5)'
  []
[]
[Tensors]
  [centers]
    type = Python
    expr = 'Scalar(torch.tensor([0.4, 1.5, 2.6, 4.5, 7.0], dtype=torch.float64))'
  []
  [edges]
    type = Python
    expr = 'Scalar(torch.tensor([0.0, 1.0, 2.0, 3.5, 6.0, 8.0], dtype=torch.float64))'
  []
[]
[Models]
  [model]
    type = LinearlyInterpolateToCellEdges
    cell_values = q
    cell_centers = centers
    cell_edges = edges
    edge_values = q_edge
  []
[]
