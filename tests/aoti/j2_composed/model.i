# j2_composed: the J2 viscoplastic model of tests/aoti/viscoplastic (Voce hardening,
# Perzyna flow rate, backward Euler, the same constants) written from NEML2's blocks and
# solved by ImplicitUpdate with Newton for the equivalent plastic strain. NEML2's yield
# function is sqrt(2/3) (vm - sy - R), so its reference stress is 150 sqrt(2/3) for the
# monolithic model's eta = 150. Compiled with every derivative pair and every parameter
# promoted (-d : -p :). The iteration cap is low on purpose: random strain steps of about
# 2e-3 converge in it (in at most 16 updates), and a uniaxial step of 0.1 over 0.1 s needs
# 20 and fails with ConvergenceError.
# Inputs: strain, plastic_strain~1, equivalent_plastic_strain~1, t, t~1.

[EquationSystems]
  [eq_sys]
    type = NonlinearSystem
    model = 'rate'
    unknowns = 'equivalent_plastic_strain'
  []
[]

[Solvers]
  [newton]
    type = Newton
    abs_tol = 1e-14
    rel_tol = 1e-13
    max_its = 17
    linear_solver = 'lu'
  []
  [lu]
    type = DenseLU
  []
[]

[Models]
  # trial state: the plastic strain frozen at the start of the step
  [trial_elastic_strain]
    type = SR2LinearCombination
    from = 'strain plastic_strain~1'
    to = 'trial_elastic_strain'
    weights = '1 -1'
  []
  [trial_stress]
    type = LinearIsotropicElasticity
    coefficients = '2e5 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    strain = 'trial_elastic_strain'
    stress = 'trial_stress'
  []
  [flow_direction]
    type = AssociativeJ2FlowDirection
    mandel_stress = 'trial_stress'
    flow_direction = 'flow_direction'
  []
  [trial_state]
    type = ComposedModel
    models = 'trial_elastic_strain trial_stress flow_direction'
  []

  # plastic strain and stress from the equivalent plastic strain
  [ep_rate]
    type = ScalarVariableRate
    variable = 'equivalent_plastic_strain'
  []
  [plastic_flow]
    type = AssociativePlasticFlow
    flow_rate = 'equivalent_plastic_strain_rate'
  []
  [integrate_plastic_strain]
    type = SR2ForwardEulerTimeIntegration
    variable = 'plastic_strain'
  []
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

  # the residual: backward Euler on the Perzyna flow rate
  [vonmises]
    type = SR2Invariant
    invariant_type = 'VONMISES'
    tensor = 'stress'
    invariant = 'effective_stress'
  []
  [isoharden]
    type = VoceIsotropicHardening
    saturated_hardening = 50
    saturation_rate = 20
  []
  [yield_function]
    type = YieldFunction
    yield_stress = 100
    isotropic_hardening = 'isotropic_hardening'
  []
  [flow_rate]
    type = PerzynaPlasticFlowRate
    reference_stress = 122.47448713915891 # 150 sqrt(2/3)
    exponent = 4
  []
  [integrate_ep]
    type = ScalarBackwardEulerTimeIntegration
    variable = 'equivalent_plastic_strain'
    rate = 'flow_rate'
  []
  [rate]
    type = ComposedModel
    models = 'ep_rate plastic_flow integrate_plastic_strain elastic_strain elasticity
              vonmises isoharden yield_function flow_rate integrate_ep'
  []

  [predictor]
    type = ConstantExtrapolationPredictor
    unknowns_Scalar = 'equivalent_plastic_strain'
  []
  [return_map]
    type = ImplicitUpdate
    equation_system = 'eq_sys'
    solver = 'newton'
    predictor = 'predictor'
  []
  [model]
    type = ComposedModel
    models = 'trial_state return_map ep_rate plastic_flow integrate_plastic_strain
              elastic_strain elasticity'
    additional_outputs = 'equivalent_plastic_strain plastic_strain'
  []
[]
