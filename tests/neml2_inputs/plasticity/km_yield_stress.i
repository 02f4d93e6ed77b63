# KocksMeckingYieldStress with its output renamed
[Models]
  [model]
    type = KocksMeckingYieldStress
    yield_stress = 'sy'
    C = -4.2
    shear_modulus = 5e4
  []
[]
