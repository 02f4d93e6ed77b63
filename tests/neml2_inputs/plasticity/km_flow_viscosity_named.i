# KocksMeckingFlowViscosity with its output named
[Models]
  [model]
    type = KocksMeckingFlowViscosity
    viscosity = 'eta'
    A = -2.0
    B = -4.0
    shear_modulus = 7e4
    eps0 = 1e6
    k = 1.38e-20
    b = 2.5e-7
  []
[]
