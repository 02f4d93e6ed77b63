# OrthotropicLinearTraction: named variables and the penalty on the normal penetration
[Models]
  [model]
    type = OrthotropicLinearTraction
    normal_separation = 'open'
    normal_penetration = 'closed'
    tangential_separation_1 = 's'
    tangential_separation_2 = 'r'
    traction = 'T'
    normal_stiffness = 2e3
    tangential_stiffness = 7e2
    penalty_stiffness = 5e6
  []
[]
