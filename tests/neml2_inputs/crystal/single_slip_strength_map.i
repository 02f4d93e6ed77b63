# One evolving strength shared by the 12 slip systems of a BCC crystal
[Tensors]
  [a]
    type = Python
    expr = 'Scalar(0.287)'
  []
  [d111]
    type = Python
    expr = 'MillerIndex.fill(1, 1, 1)'
  []
  [p110]
    type = Python
    expr = 'MillerIndex.fill(1, 1, 0)'
  []
[]
[Data]
  [bcc]
    type = CubicCrystal
    lattice_parameter = a
    slip_directions = d111
    slip_planes = p110
  []
[]
[Models]
  [model]
    type = SingleSlipStrengthMap
    crystal_geometry = bcc
    slip_hardening = tau_bar
    constant_strength = 35
  []
[]
