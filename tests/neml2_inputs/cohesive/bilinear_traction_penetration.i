# BilinearTraction: named separations and damage (history d~1), with the penalty on
# the normal penetration
[Models]
  [model]
    type = BilinearTraction
    effective_separation = 'dm'
    normal_separation = 'dn'
    normal_penetration = 'dp'
    tangential_separation_1 = 'ds1'
    tangential_separation_2 = 'ds2'
    traction = 'T'
    damage = 'd'
    penalty_stiffness = 2.5e5
    critical_separation = 2e-3
    full_separation = 1.2e-2
  []
[]
