# Single-crystal plasticity with one dislocation density per slip system: the elastic
# strain, the orientation and the twelve densities integrated by backward Euler and solved
# together by Newton's method with a backtracking line search, each step starting from a
# strain predicted from the deformation rate (at rest) and the densities and orientation
# of the step before.
[Tensors]
  [slip_direction]
    type = Python
    expr = 'MillerIndex.fill(1, 1, 0)'
  []
  [slip_plane]
    type = Python
    expr = 'MillerIndex.fill(1, 1, 1)'
  []
[]
[Data]
  [crystal_geometry]
    type = CubicCrystal
    lattice_parameter = 0.352
    slip_directions = slip_direction
    slip_planes = slip_plane
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
    coefficients = '150000 0.31'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    strain = elastic_strain
    stress = cauchy_stress
  []
  [shear]
    type = ResolvedShear
    stress = cauchy_stress
  []
  [obstacles]
    type = DislocationObstacleStrengthMap
    dislocation_density = forest_density
    constant_strength = 35
    alpha = 0.4
    mu = 57000
    b = 2.5e-4
  []
  [rule]
    type = PowerLawSlipRule
    gamma0 = 0.02
    n = 12
  []
  [storage]
    type = PerSlipForestDislocationEvolution
    dislocation_density = forest_density
    k1 = 90
    k2 = 12
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
  [density_residual]
    type = ScalarBackwardEulerTimeIntegration
    variable = forest_density
  []
  [strain_residual]
    type = SR2BackwardEulerTimeIntegration
    variable = elastic_strain
  []
  [orientation_residual]
    type = WR2ImplicitExponentialTimeIntegration
    variable = orientation
  []
  [residuals]
    type = ComposedModel
    models = 'rotation elasticity shear obstacles rule storage plastic_rate plastic_spin
              stretch_rate spin density_residual strain_residual orientation_residual'
  []
  [strain_guess]
    type = CrystalPlasticityStrainPredictor
    scale = 0.2
    threshold = 5e-4
  []
  [state_guess]
    type = ConstantExtrapolationPredictor
    unknowns_Scalar = forest_density
    unknowns_MRP = orientation
  []
  [guess]
    type = ComposedModel
    models = 'strain_guess state_guess'
  []
  [model]
    type = ImplicitUpdate
    equation_system = forest
    solver = newton
    predictor = guess
  []
[]
[EquationSystems]
  [forest]
    type = NonlinearSystem
    model = residuals
    unknowns = 'elastic_strain orientation forest_density'
  []
[]
[Solvers]
  [newton]
    type = NewtonWithLineSearch
    abs_tol = 1e-11
    rel_tol = 1e-10
    max_its = 40
    max_linesearch_iterations = 3
    linesearch_cutback = 2.5
    linear_solver = lu
  []
  [lu]
    type = DenseLU
  []
[]
[Settings]
  [example_batch_shape]
    forest_density = '(2; 12)'
  []
[]
