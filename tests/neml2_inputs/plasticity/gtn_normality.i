# The derivatives of the GTN yield function of a Mandel stress by the stress (the flow
# direction), by the isotropic hardening and by the void fraction, as Normality gives
# them. Inputs: mandel_stress, isotropic_hardening, void_fraction.
[Models]
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
  [model]
    type = Normality
    model = 'surface'
    function = 'yield_function'
    from = 'mandel_stress isotropic_hardening void_fraction'
    to = 'flow_direction isotropic_hardening_direction void_direction'
  []
[]
