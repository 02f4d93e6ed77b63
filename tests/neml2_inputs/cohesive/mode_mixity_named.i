# ModeMixity: named variables
[Models]
  [model]
    type = ModeMixity
    normal_separation = 'dn'
    tangential_separation = 'ds'
    mode_mixity = 'beta'
  []
[]
