# Crystal plasticity: a power-law slip rule whose reference rate is a variable, fed by a
# single-slip strength map whose constant strength is a variable too
[Settings]
  [example_batch_shape]
    resolved_shears = '(2; 12)'
  []
[]
[Tensors]
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
  [crystal_geometry]
    type = CubicCrystal
    lattice_parameter = 0.287
    slip_directions = d111
    slip_planes = p110
  []
[]
[Models]
  [strength]
    type = SingleSlipStrengthMap
    constant_strength = 'tau0'
  []
  [rule]
    type = PowerLawSlipRule
    gamma0 = 'reference_rate'
    n = 7.5
  []
  [model]
    type = ComposedModel
    models = 'strength rule'
  []
[]
