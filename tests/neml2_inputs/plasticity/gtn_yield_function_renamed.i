# gtn_yield_function.i with every input renamed, which NEML2 3.1.0 refuses (KeyError:
# its GTNYieldFunction looks its inputs up by their default names)
[Models]
  [model]
    type = GTNYieldFunction
    flow_invariant = 'se'
    poro_invariant = 'sp'
    void_fraction = 'phi'
    isotropic_hardening = 'k'
    yield_stress = 150
    q1 = 1.5
    q2 = 1.1
    q3 = 2.25
  []
[]
