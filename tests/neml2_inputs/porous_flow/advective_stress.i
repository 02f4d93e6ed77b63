# AdvectiveStress: the default names, no swelling or thermal Jacobian
[Models]
  [model]
    type = AdvectiveStress
    coefficient = 1.7
  []
[]
