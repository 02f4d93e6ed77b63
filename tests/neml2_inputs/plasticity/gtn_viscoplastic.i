# Small-strain GTN porous viscoplasticity: a Voce-hardened matrix whose voids grow with
# the plastic dilatation. The GTN yield function of the Mandel stress gives, by
# Normality, the flow direction and the isotropic hardening direction, and a Perzyna
# rule the flow rate. Backward Euler in time; the unknowns plastic_strain,
# equivalent_plastic_strain and void_fraction are solved together by Newton.
# Inputs: strain, t, t~1 and the three unknowns at the start of the step (<name>~1).

[EquationSystems]
  [eq_sys]
    type = NonlinearSystem
    model = 'residual'
    unknowns = 'plastic_strain equivalent_plastic_strain void_fraction'
  []
[]

[Solvers]
  [newton]
    type = Newton
    abs_tol = 1e-12
    rel_tol = 1e-14
    max_its = 50
    linear_solver = 'lu'
  []
  [lu]
    type = DenseLU
  []
[]

[Models]
  [hardening]
    type = VoceIsotropicHardening
    saturated_hardening = 180
    saturation_rate = 12
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
  [mandel]
    type = IsotropicMandelStress
    cauchy_stress = 'stress'
  []
  [von_mises]
    type = SR2Invariant
    invariant_type = 'VONMISES'
    tensor = 'mandel_stress'
    invariant = 'flow_invariant'
  []
  [pressure]
    type = SR2Invariant
    invariant_type = 'I1'
    tensor = 'mandel_stress'
    invariant = 'poro_invariant'
  []
  [gtn]
    type = GTNYieldFunction
    yield_stress = 250
    q1 = 1.5
    q2 = 1.0
    q3 = 2.25
    isotropic_hardening = 'isotropic_hardening'
  []
  [surface]
    type = ComposedModel
    models = 'von_mises pressure gtn'
  []
  [directions]
    type = Normality
    model = 'surface'
    function = 'yield_function'
    from = 'mandel_stress isotropic_hardening'
    to = 'flow_direction isotropic_hardening_direction'
  []
  [plastic_flow]
    type = AssociativePlasticFlow
  []
  [hardening_flow]
    type = AssociativeIsotropicPlasticHardening
  []
  [void_growth]
    type = GursonCavitation
  []
  [flow_rate]
    type = PerzynaPlasticFlowRate
    reference_stress = 0.5
    exponent = 2
  []
  [integrate_plastic_strain]
    type = SR2BackwardEulerTimeIntegration
    variable = 'plastic_strain'
  []
  [integrate_equivalent_plastic_strain]
    type = ScalarBackwardEulerTimeIntegration
    variable = 'equivalent_plastic_strain'
  []
  [integrate_void_fraction]
    type = ScalarBackwardEulerTimeIntegration
    variable = 'void_fraction'
  []
  [residual]
    type = ComposedModel
    models = 'hardening elastic_strain elasticity mandel von_mises pressure gtn directions
              plastic_flow hardening_flow flow_rate void_growth integrate_plastic_strain
              integrate_equivalent_plastic_strain integrate_void_fraction'
  []

  [predictor]
    type = ConstantExtrapolationPredictor
    unknowns_SR2 = 'plastic_strain'
    unknowns_Scalar = 'equivalent_plastic_strain void_fraction'
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
    additional_outputs = 'plastic_strain equivalent_plastic_strain void_fraction'
  []
[]
