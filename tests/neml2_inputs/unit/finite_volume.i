# Finite-volume transport: the advection right-hand side of a concentration on five
# cells (velocities interpolated to the interior edges, the upwinded flux there, inflow
# and outflow fluxes at the boundaries, the rate of each cell) at two points, flow to the
# right and to the left, beside a Gaussian source smeared over the same cells (one
# magnitude and location for both points). The cell values are Scalars with one
# sub-batch axis (sub_batch_ndim = 1), the cells.
[Settings]
  [example_batch_shape]
    c = '(2; 5)'
    v = '(2; 5)'
  []
[]

[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Scalar_names = 'c v magnitude location'
    input_Scalar_values = 'c0 v0 2.0 0.45'
    output_Scalar_names = 'c_rate source'
    output_Scalar_values = 'rate_expected source_expected'
  []
[]

[Tensors]
  [c0]
    type = Python
    expr = 'Scalar(torch.tensor([[1.0, 0.8, 0.6, 0.4, 0.2], [0.0, 0.5, 1.0, 0.5, 0.25]], dtype=torch.float64), sub_batch_ndim=1)'
  []
  [v0]
    type = Python
    expr = 'Scalar(torch.tensor([[1.0, 1.2, 1.5, 2.0, 2.5], [-1.0, -2.0, -1.5, -0.5, -1.0]], dtype=torch.float64), sub_batch_ndim=1)'
  []
  [centers]
    type = Python
    expr = 'Scalar(torch.tensor([0.1, 0.3, 0.5, 0.7, 0.9], dtype=torch.float64))'
  []
  [edges]
    type = Python
    expr = 'Scalar(torch.tensor([0.0, 0.2, 0.4, 0.6, 0.8, 1.0], dtype=torch.float64))'
  []
  [rate_expected]
    type = Python
    expr = 'Scalar(torch.tensor([[-2.999999999999999, 0.09999999999999898, 0.15000000000000013, 0.7500000000000001, 4.0], [6.25, 5.0, -6.25, -1.5625, -1.4375000000000002]], dtype=torch.float64))'
  []
  [source_expected]
    type = Python
    expr = 'Scalar(torch.tensor([0.34962518791612646, 3.2262763269219112, 5.03177636923991, 1.3263618505699835, 0.05909131215917343], dtype=torch.float64))'
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
    bc_value = 0.5
  []
  [outflow]
    type = FiniteVolumeAppendBoundaryCondition
    input = J_with_bc_left
    output = J_all
    side = right
    bc_value = 0.1
  []
  [rate]
    type = FiniteVolumeGradient
    u = J_all
    grad_u = c_rate
    dx = 0.2
  []
  [smeared]
    type = SmearedDeltaSource
    width = 0.15
    cell_centers = centers
    smeared_source = source
  []
  [model]
    type = ComposedModel
    models = 'velocity flux inflow outflow rate smeared'
  []
[]
