[Tensors]
  [burgers_direction]
    type = Python
    expr = 'MillerIndex.fill(1, 1, 0)'
  []
  [glide_plane]
    type = Python
    expr = 'MillerIndex.fill(1, 1, 1)'
  []
[]
[Data]
  [crystal_geometry]
    type = CubicCrystal
    lattice_parameter = 0.3615
    slip_directions = burgers_direction
    slip_planes = glide_plane
  []
[]
[Models]
  [model]
    type = PlasticVorticity
    slip_rates = gdot
  []
[]
