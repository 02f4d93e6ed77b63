# GTNYieldFunction with isotropic hardening (renamed); NEML2 3.1.0 reads the other
# three inputs by their default names only (gtn_yield_function_renamed.i)
[Models]
  [model]
    type = GTNYieldFunction
    isotropic_hardening = 'k'
    yield_stress = 150
    q1 = 1.5
    q2 = 1.1
    q3 = 2.25
  []
[]
