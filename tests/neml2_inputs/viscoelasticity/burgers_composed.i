# A Burgers viscoelastic solid under strain control: the Maxwell viscous strain and the
# Kelvin-Voigt strain are integrated by backward Euler and solved for by ImplicitUpdate.
# Inputs: strain, maxwell_viscous_strain~1, kelvin_voigt_strain~1, t, t~1.

[EquationSystems]
  [eq_sys]
    type = NonlinearSystem
    model = 'residual'
    unknowns = 'maxwell_viscous_strain kelvin_voigt_strain'
  []
[]

[Solvers]
  [newton]
    type = Newton
    abs_tol = 1e-14
    rel_tol = 1e-12
    max_its = 10
    linear_solver = 'lu'
  []
  [lu]
    type = DenseLU
  []
[]

[Models]
  [burgers]
    type = BurgersElement
    maxwell_modulus = 2e4
    maxwell_viscosity = 8e4
    kelvin_modulus = 1e4
    kelvin_viscosity = 6e3
  []
  [integrate_maxwell]
    type = SR2BackwardEulerTimeIntegration
    variable = 'maxwell_viscous_strain'
  []
  [integrate_kelvin]
    type = SR2BackwardEulerTimeIntegration
    variable = 'kelvin_voigt_strain'
  []
  [residual]
    type = ComposedModel
    models = 'burgers integrate_maxwell integrate_kelvin'
  []
  [predictor]
    type = ConstantExtrapolationPredictor
    unknowns_SR2 = 'maxwell_viscous_strain kelvin_voigt_strain'
  []
  [update]
    type = ImplicitUpdate
    equation_system = 'eq_sys'
    solver = 'newton'
    predictor = 'predictor'
  []
  [model]
    type = ComposedModel
    models = 'update burgers'
    additional_outputs = 'maxwell_viscous_strain kelvin_voigt_strain'
  []
[]
