# KocksMeckingActivationEnergy (normalised units)
[Models]
  [model]
    type = KocksMeckingActivationEnergy
    strain_rate = 'eps_dot'
    shear_modulus = 5e4
    eps0 = 1e7
    k = 1.38e-20
    b = 2.5e-7
  []
[]
