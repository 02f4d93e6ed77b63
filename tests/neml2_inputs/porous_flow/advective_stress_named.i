# AdvectiveStress: named variables with the swelling and thermal Jacobians
[Models]
  [model]
    type = AdvectiveStress
    js = 'J_swelling'
    jt = 'J_thermal'
    deformation_gradient = 'F'
    pk1_stress = 'P'
    advective_stress = 'ps'
    coefficient = 0.6
  []
[]
