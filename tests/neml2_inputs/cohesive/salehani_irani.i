# SalehaniIraniTraction: the default names, no penetration (penalty_stiffness unused)
[Models]
  [model]
    type = SalehaniIraniTraction
    normal_characteristic_length = 0.02
    tangential_characteristic_length = 0.03
    normal_strength = 40
    shear_strength = 25
  []
[]
