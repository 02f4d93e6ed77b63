# SalehaniIraniTraction: named variables, the penalty on the normal penetration
[Models]
  [model]
    type = SalehaniIraniTraction
    normal_separation = 'gap'
    normal_penetration = 'overlap'
    tangential_separation_1 = 'slip1'
    tangential_separation_2 = 'slip2'
    traction = 't'
    damage = 'omega'
    normal_characteristic_length = 1.5
    tangential_characteristic_length = 0.8
    normal_strength = 3
    shear_strength = 5
    penalty_stiffness = 1e3
  []
[]
