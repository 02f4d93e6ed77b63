# KocksMeckingFlowViscosity: the output named after the block
[Models]
  [model]
    type = KocksMeckingFlowViscosity
    temperature = 'T'
    A = -3.5
    B = -5.0
    shear_modulus = 5e4
    eps0 = 1e7
    k = 1.38e-20
    b = 2.5e-7
  []
[]
