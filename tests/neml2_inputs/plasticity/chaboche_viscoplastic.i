# Small-strain Chaboche viscoplasticity: two back stresses (X1 with Chaboche's dynamic and
# static recovery; X2 Frederick-Armstrong plus power-law static recovery), an isotropic
# hardening k in rate form (slope-saturation Voce plus power-law static recovery) and a
# Perzyna flow rate on the von Mises stress of the overstress M - X1 - X2. Backward Euler
# in time; the unknowns plastic_strain, X1, X2 and k are solved together by Newton.
# Inputs: strain, t, t~1, plastic_strain~1, X1~1, X2~1, k~1.

[EquationSystems]
  [eq_sys]
    type = NonlinearSystem
    model = 'residual'
    unknowns = 'plastic_strain X1 X2 k'
  []
[]

[Solvers]
  [newton]
    type = Newton
    abs_tol = 1e-11
    rel_tol = 1e-13
    max_its = 50
    linear_solver = 'lu'
  []
  [lu]
    type = DenseLU
  []
[]

[Models]
  [elastic_strain]
    type = SR2LinearCombination
    from = 'strain plastic_strain'
    to = 'elastic_strain'
    weights = '1 -1'
  []
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '2e5 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    strain = 'elastic_strain'
  []
  [mandel]
    type = IsotropicMandelStress
    cauchy_stress = 'stress'
  []
  [overstress]
    type = SR2LinearCombination
    from = 'mandel_stress X1 X2'
    to = 'overstress'
    weights = '1 -1 -1'
  []
  [vonmises]
    type = SR2Invariant
    invariant_type = 'VONMISES'
    tensor = 'overstress'
    invariant = 'effective_stress'
  []
  [yield_function]
    type = YieldFunction
    yield_stress = 120
    isotropic_hardening = 'k'
  []
  [flow_rate]
    type = PerzynaPlasticFlowRate
    reference_stress = 180
    exponent = 3.5
  []
  [flow_direction]
    type = AssociativeJ2FlowDirection
    mandel_stress = 'overstress'
  []
  [plastic_flow]
    type = AssociativePlasticFlow
  []
  [X1_rate]
    type = ChabochePlasticHardening
    back_stress = 'X1'
    C = 3e4
    g = 150
    A = 1e-6
    a = 3
  []
  [X2_dynamic]
    type = FredrickArmstrongPlasticHardening
    back_stress = 'X2'
    back_stress_rate = 'X2_dynamic'
    C = 8e3
    g = 40
  []
  [X2_recovery]
    type = PowerLawKinematicHardeningStaticRecovery
    back_stress = 'X2'
    back_stress_rate = 'X2_recovery'
    tau = 400
    n = 3
  []
  [X2_rate]
    type = SR2LinearCombination
    from = 'X2_dynamic X2_recovery'
    to = 'X2_rate'
  []
  [k_hardening]
    type = SlopeSaturationVoceIsotropicHardening
    isotropic_hardening = 'k'
    isotropic_hardening_rate = 'k_hardening'
    saturated_hardening = 150
    initial_hardening_rate = 2000
  []
  [k_recovery]
    type = PowerLawIsotropicHardeningStaticRecovery
    isotropic_hardening = 'k'
    isotropic_hardening_rate = 'k_recovery'
    tau = 600
    n = 3
  []
  [k_rate]
    type = ScalarLinearCombination
    from = 'k_hardening k_recovery'
    to = 'k_rate'
  []
  [integrate_plastic_strain]
    type = SR2BackwardEulerTimeIntegration
    variable = 'plastic_strain'
  []
  [integrate_X1]
    type = SR2BackwardEulerTimeIntegration
    variable = 'X1'
  []
  [integrate_X2]
    type = SR2BackwardEulerTimeIntegration
    variable = 'X2'
  []
  [integrate_k]
    type = ScalarBackwardEulerTimeIntegration
    variable = 'k'
  []
  [residual]
    type = ComposedModel
    models = 'elastic_strain elasticity mandel overstress vonmises yield_function flow_rate
              flow_direction plastic_flow X1_rate X2_dynamic X2_recovery X2_rate k_hardening
              k_recovery k_rate integrate_plastic_strain integrate_X1 integrate_X2 integrate_k'
  []

  [predictor]
    type = ConstantExtrapolationPredictor
    unknowns_SR2 = 'plastic_strain X1 X2'
    unknowns_Scalar = 'k'
  []
  [return_map]
    type = ImplicitUpdate
    equation_system = 'eq_sys'
    solver = 'newton'
    predictor = 'predictor'
  []
  [model]
    type = ComposedModel
    models = 'return_map elastic_strain elasticity'
    additional_outputs = 'plastic_strain X1 X2 k'
  []
[]
