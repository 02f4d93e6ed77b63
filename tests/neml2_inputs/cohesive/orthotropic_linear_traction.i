# OrthotropicLinearTraction: the default names, no penetration
[Models]
  [model]
    type = OrthotropicLinearTraction
    normal_stiffness = 1e5
    tangential_stiffness = 4e4
  []
[]
