# Small-strain rate-independent GTN porous plasticity: gtn_viscoplastic.i with the
# Perzyna rule replaced by the consistency condition, yield function <= 0 <= flow rate
# with one of them zero, written as the min-map complementarity
# min(-yield_function, flow_rate) = 0. The unknowns plastic_strain,
# equivalent_plastic_strain, void_fraction and flow_rate are solved together by Newton.
# Inputs: strain, t, t~1 and the four unknowns at the start of the step (<name>~1).

[EquationSystems]
  [eq_sys]
    type = NonlinearSystem
    model = 'residual'
    unknowns = 'plastic_strain equivalent_plastic_strain void_fraction flow_rate'
    residuals = 'plastic_strain_residual equivalent_plastic_strain_residual
                 void_fraction_residual complementarity'
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
  [consistency]
    type = MinMapComplementarity
    a = 'yield_function'
    a_inequality = 'LE'
    b = 'flow_rate'
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
              plastic_flow hardening_flow consistency void_growth integrate_plastic_strain
              integrate_equivalent_plastic_strain integrate_void_fraction'
  []

  [predictor]
    type = ConstantExtrapolationPredictor
    unknowns_SR2 = 'plastic_strain'
    unknowns_Scalar = 'equivalent_plastic_strain void_fraction flow_rate'
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
    additional_outputs = 'plastic_strain equivalent_plastic_strain void_fraction flow_rate'
  []
[]
