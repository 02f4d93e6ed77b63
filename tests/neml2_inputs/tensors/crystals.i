# [Data] crystal geometries: FCC {111}<110>, BCC {110}<111> and {112}<111>, two families.
[Tensors]
  [a]
    type = Python
    expr = 'Scalar(1.2)'
  []
  [fcc_d]
    type = Python
    expr = 'MillerIndex.fill(1, 1, 0)'
  []
  [fcc_p]
    type = Python
    expr = 'MillerIndex.fill(1, 1, 1)'
  []
  [bcc_d]
    type = Python
    expr = 'MillerIndex.fill(1, 1, 1)'
  []
  [bcc_p]
    type = Python
    expr = 'MillerIndex.fill(1, 1, 0)'
  []
  [bcc2_d]
    type = Python
    expr = 'MillerIndex(torch.tensor([[1, 1, 1], [1, 1, 1]]))'
  []
  [bcc2_p]
    type = Python
    expr = 'MillerIndex(torch.tensor([[1, 1, 0], [1, 1, 2]]))'
  []
  [scaled_d]
    type = Python
    expr = 'MillerIndex.fill(2, 2, 0)'
  []
[]
[Data]
  [fcc]
    type = CubicCrystal
    lattice_parameter = 1.0
    slip_directions = fcc_d
    slip_planes = fcc_p
  []
  [bcc]
    type = CubicCrystal
    lattice_parameter = a
    slip_directions = bcc_d
    slip_planes = bcc_p
  []
  [bcc2]
    type = CubicCrystal
    lattice_parameter = 2.0
    slip_directions = bcc2_d
    slip_planes = bcc2_p
  []
  [fcc_scaled]
    type = CubicCrystal
    lattice_parameter = 3.5
    slip_directions = scaled_d
    slip_planes = fcc_p
  []
[]
[Models]
[]
