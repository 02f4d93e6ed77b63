# A 1D advection right-hand side per point: the cell velocities interpolated to the
# interior edges, the upwinded flux of the concentration there, the inflow flux at the
# left boundary and the outflow (zero-gradient: the last cell's flux, given here as a
# value) at the right, and the rate -(J_(i+1) - J_i) / dx of each cell
[Settings]
  [example_batch_shape]
    c = '(3; 5)'
    v = '(3; 5)'
  []
[]
[Tensors]
  [centers]
    type = Python
    expr = 'Scalar(torch.tensor([0.1, 0.3, 0.5, 0.7, 0.9], dtype=torch.float64))'
  []
  [edges]
    type = Python
    expr = 'Scalar(torch.tensor([0.0, 0.2, 0.4, 0.6, 0.8, 1.0], dtype=torch.float64))'
  []
[]
[Models]
  [velocity]
    type = LinearlyInterpolateToCellEdges
    cell_values = v
    cell_centers = centers
    cell_edges = edges
    edge_values = v_edge
  []
  [flux]
    type = FiniteVolumeUpwindedAdvectiveFlux
    u = c
    v_edge = v_edge
    flux = J
  []
  [inflow]
    type = FiniteVolumeAppendBoundaryCondition
    input = J
    bc_value = 0.4
  []
  [outflow]
    type = FiniteVolumeAppendBoundaryCondition
    input = J_with_bc_left
    output = J_all
    side = right
    bc_value = -0.1
  []
  [rate]
    type = FiniteVolumeGradient
    u = J_all
    grad_u = c_rate
    dx = 0.2
  []
  [model]
    type = ComposedModel
    models = 'velocity flux inflow outflow rate'
  []
[]
