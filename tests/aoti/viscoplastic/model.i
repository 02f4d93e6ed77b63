# viscoplastic: rate-dependent J2 viscoplasticity with Voce hardening, solved per point
# by Newton's method. Compiled with every derivative pair and every parameter promoted
# (-d : -p :). The iteration cap is low on purpose: a uniaxial strain step of 0.1 over
# dt = 8 s needs more than 8 Newton updates and fails with ConvergenceError, and the
# same step over dt = 4 s converges (the threshold lies near dt = 5.8 s).

[Solvers]
  [newton]
    type = Newton
    abs_tol = 1e-10
    rel_tol = 1e-10
    max_its = 8
  []
[]

[Models]
  [model]
    type = J2Viscoplasticity
    E = 200000
    nu = 0.3
    sy = 100
    Q = 50
    b = 20
    eta = 150
    n = 4
    solver = newton
  []
[]
