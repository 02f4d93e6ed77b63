# AdvectiveStress: the swelling Jacobian alone
[Models]
  [model]
    type = AdvectiveStress
    js = 'js'
    coefficient = -2.2
  []
[]
