# KocksMeckingRateSensitivity
[Models]
  [model]
    type = KocksMeckingRateSensitivity
    A = -3.5
    shear_modulus = 5e4
    k = 1.38e-20
    b = 2.5e-7
  []
[]
