# Stress and orientation to slip rates and the hardening rate, composed
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
  [rotation]
    type = RotationMatrix
    from = orientation
    to = orientation_matrix
  []
  [shear]
    type = ResolvedShear
  []
  [strength]
    type = SingleSlipStrengthMap
    constant_strength = 40
  []
  [rule]
    type = PowerLawSlipRule
    gamma0 = 0.1
    n = 6
  []
  [total]
    type = SumSlipRates
  []
  [hardening]
    type = VoceSingleSlipHardeningRule
    initial_slope = 300
    saturated_hardening = 70
  []
  [model]
    type = ComposedModel
    models = 'rotation shear strength rule total hardening'
    additional_outputs = 'slip_rates'
  []
[]
