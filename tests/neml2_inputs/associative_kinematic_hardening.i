# AssociativeKinematicPlasticHardening
[Models]
  [model]
    type = AssociativeKinematicPlasticHardening
  []
[]
