[Models]
  [model]
    type = GreenLagrangeStrain
    deformation_gradient = F
    strain = E
  []
[]
