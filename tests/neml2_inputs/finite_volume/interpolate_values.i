# LinearlyInterpolateToCellEdges: the cell values a [Tensors] block (a model without
# inputs); NEML2 3.1.0 cannot evaluate this one
[Tensors]
  [values]
    type = Python
    expr = 'Scalar(torch.tensor([2.0, -1.0, 0.5, 3.0, 1.0], dtype=torch.float64))'
  []
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
    cell_values = values
    cell_centers = centers
    cell_edges = edges
    edge_values = q_edge
  []
[]
