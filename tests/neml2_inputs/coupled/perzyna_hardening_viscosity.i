# Plasticity: the yield stress is a variable and Perzyna's reference stress is the
# output of another model (a KocksMeckingFlowViscosity of the temperature)
[Models]
  [viscosity]
    type = KocksMeckingFlowViscosity
    A = -3.2
    B = -4.1
    shear_modulus = 7.9e4
    eps0 = 1e10
    k = 1.38064e-20
    b = 2.48e-7
  []
  [surface]
    type = YieldFunction
    yield_stress = 'sy'
    isotropic_hardening = 'isotropic_hardening'
  []
  [flow]
    type = PerzynaPlasticFlowRate
    reference_stress = 'viscosity'
    exponent = 'n'
  []
  [model]
    type = ComposedModel
    models = 'surface flow'
  []
[]
