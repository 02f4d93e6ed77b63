# AdvectiveStress: the coefficient given by a variable (NEML2 3.1.0 cannot evaluate this)
[Models]
  [model]
    type = AdvectiveStress
    jt = 'jt'
    coefficient = 'c'
  []
[]
