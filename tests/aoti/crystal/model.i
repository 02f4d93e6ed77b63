# Single-crystal plasticity in rate form: elastic strain, slip hardening and orientation
# integrated by backward Euler and solved together, one Newton solve per step
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
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '120000 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    strain = elastic_strain
    stress = cauchy_stress
  []
  [shear]
    type = ResolvedShear
    stress = cauchy_stress
  []
  [strength]
    type = SingleSlipStrengthMap
    constant_strength = 60
  []
  [rule]
    type = PowerLawSlipRule
    gamma0 = 0.05
    n = 9
  []
  [total]
    type = SumSlipRates
  []
  [hardening]
    type = VoceSingleSlipHardeningRule
    initial_slope = 800
    saturated_hardening = 40
  []
  [plastic_rate]
    type = PlasticDeformationRate
  []
  [plastic_spin]
    type = PlasticVorticity
  []
  [stretch_rate]
    type = ElasticStrainRate
  []
  [spin]
    type = OrientationRate
  []
  [hardening_residual]
    type = ScalarBackwardEulerTimeIntegration
    variable = slip_hardening
  []
  [strain_residual]
    type = SR2BackwardEulerTimeIntegration
    variable = elastic_strain
  []
  [orientation_residual]
    type = WR2ImplicitExponentialTimeIntegration
    variable = orientation
  []
  [rates]
    type = ComposedModel
    models = 'rotation elasticity shear strength rule total hardening plastic_rate plastic_spin
              stretch_rate spin hardening_residual strain_residual orientation_residual'
  []
  [guess]
    type = ConstantExtrapolationPredictor
    unknowns_SR2 = elastic_strain
    unknowns_Scalar = slip_hardening
    unknowns_MRP = orientation
  []
  [model]
    type = ImplicitUpdate
    equation_system = crystal
    solver = newton
    predictor = guess
  []
[]
[EquationSystems]
  [crystal]
    type = NonlinearSystem
    model = rates
    unknowns = 'elastic_strain slip_hardening orientation'
  []
[]
[Solvers]
  [newton]
    type = Newton
    abs_tol = 1e-12
    rel_tol = 1e-10
    max_its = 30
    linear_solver = lu
  []
  [lu]
    type = DenseLU
  []
[]
