# vocabulary: one composed model that exercises what NEML2's vocabulary adds beyond
# Scalar and SR2: a sub-batched input (one strain per grain, 3 grains, declared in
# [Settings]) averaged over its sub-batch axis, an interpolation whose tables are
# tensor-valued options from [Tensors], and one variable of each other tensor type:
# R2, WR2, MRP, Vec, SSR4 and MillerIndex.
# Compiled with every derivative pair (-d :).

[Settings]
  [example_batch_shape]
    grain_strain = '(2; 3)'
  []
[]

[Tensors]
  [knots]
    type = Python
    expr = 'Scalar(torch.linspace(0.0, 0.04, 5))'
  []
  [hardening]
    type = Python
    expr = 'Scalar(torch.tensor([1.0, 1.5, 1.8, 2.0, 2.1]))'
  []
[]

[Models]
  [shift]
    type = SR2LinearCombination
    from = 'grain_strain macro_strain'
    to = 'shifted_strain'
    weights = '2 -0.5'
  []
  [average]
    type = SR2IntermediateMean
    from = 'shifted_strain'
    to = 'mean_strain'
    reduces = 'grain'
  []
  [invariant]
    type = SR2Invariant
    invariant_type = 'EFFECTIVE_STRAIN'
    tensor = 'mean_strain'
    invariant = 'equivalent_strain'
  []
  [scale]
    type = ScalarLinearInterpolation
    argument = 'equivalent_strain'
    abscissa = 'knots'
    ordinate = 'hardening'
    output = 'scale'
  []
  [spin]
    type = R2ToWR2
    input = 'velocity_gradient'
    output = 'spin'
  []
  [rotation]
    type = RotationMatrix
    from = 'orientation'
    to = 'rotation'
  []
  [components]
    type = VecComponents
    from = 'velocity'
    to = 'vx vy vz'
  []
  [stiffness]
    type = CopySSR4
    from = 'stiffness'
    to = 'stiffness_copy'
  []
  [plane]
    type = CopyMillerIndex
    from = 'plane'
    to = 'slip_plane'
  []
  [model]
    type = ComposedModel
    models = 'shift average invariant scale spin rotation components stiffness plane'
    additional_outputs = 'shifted_strain'
  []
[]
