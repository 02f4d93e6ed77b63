# GursonCavitation: void growth from the plastic dilatation
[Models]
  [model]
    type = GursonCavitation
    plastic_strain_rate = 'Ep_dot'
  []
[]
