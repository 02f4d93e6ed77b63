# [Data] blocks that are refused, and one that is fine (read by a model option).
[Tensors]
  [d]
    type = Python
    expr = 'MillerIndex.fill(1, 1, 0)'
  []
  [two_planes]
    type = Python
    expr = 'MillerIndex(torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]]))'
  []
  [vec]
    type = Python
    expr = 'Vec.fill(1, 1, 1)'
  []
  [p]
    type = Python
    expr = 'MillerIndex.fill(1, 1, 1)'
  []
[]
[Data]
  [good]
    type = CubicCrystal
    lattice_parameter = 1.0
    slip_directions = d
    slip_planes = p
  []
  [hexagonal]
    type = HexagonalCrystal
    lattice_parameter = 1.0
  []
  [mismatch]
    type = CubicCrystal
    lattice_parameter = 1.0
    slip_directions = d
    slip_planes = two_planes
  []
  [wrong_type]
    type = CubicCrystal
    lattice_parameter = 1.0
    slip_directions = d
    slip_planes = vec
  []
  [no_systems]
    type = CubicCrystal
    lattice_parameter = 1.0
    slip_directions = p
    slip_planes = p
  []
  [extra_option]
    type = CubicCrystal
    lattice_parameter = 1.0
    slip_directions = d
    slip_planes = p
    crystal_class = 432
  []
[]
[Models]
  [model]
    type = Dummy
    crystal_geometry = good
    other = hexagonal
    missing = no_such_data
    mismatch = mismatch
    wrong_type = wrong_type
    no_systems = no_systems
    extra_option = extra_option
  []
[]
