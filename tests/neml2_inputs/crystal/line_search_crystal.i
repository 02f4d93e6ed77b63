# Single-crystal plasticity in rate form (the residuals of tests/aoti/crystal/model.i, with a
# stiffer slip rule) solved by NewtonWithLineSearch: elastic strain, slip hardening and orientation
# integrated by backward Euler, each step starting from a CrystalPlasticityStrainPredictor.
# [backtracking] predicts every unknown (the strain predictor composed with a
# ConstantExtrapolationPredictor); [wolfe] predicts the elastic strain alone, so the
# guesses of slip_hardening and orientation are inputs of the update. Every line-search
# option differs from NEML2's default. The tolerance is loose (rel_tol 1e-3) so that a
# solve stops while its result still depends on the path the line search took.
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
    gamma0 = 0.01
    n = 12
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
  [strain_guess]
    type = CrystalPlasticityStrainPredictor
    scale = 0.8
    threshold = 2e-4
  []
  [state_guess]
    type = ConstantExtrapolationPredictor
    unknowns_Scalar = slip_hardening
    unknowns_MRP = orientation
  []
  [guess]
    type = ComposedModel
    models = 'strain_guess state_guess'
  []
  [backtracking]
    type = ImplicitUpdate
    equation_system = crystal
    solver = backtrack
    predictor = guess
  []
  [wolfe]
    type = ImplicitUpdate
    equation_system = crystal
    solver = wolfe
    predictor = strain_guess
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
  [backtrack]
    type = NewtonWithLineSearch
    linesearch_type = BACKTRACKING
    max_linesearch_iterations = 4
    linesearch_cutback = 1.5
    linesearch_stopping_criteria = 0.08
    abs_tol = 1e-12
    rel_tol = 1e-3
    max_its = 20
    linear_solver = lu
  []
  [wolfe]
    type = NewtonWithLineSearch
    linesearch_type = STRONG_WOLFE
    max_linesearch_iterations = 3
    linesearch_cutback = 3
    linesearch_stopping_criteria = 0.3
    abs_tol = 1e-12
    rel_tol = 1e-3
    max_its = 20
    linear_solver = lu
  []
  [lu]
    type = DenseLU
  []
[]
