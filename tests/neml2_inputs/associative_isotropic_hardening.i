# AssociativeIsotropicPlasticHardening
[Models]
  [model]
    type = AssociativeIsotropicPlasticHardening
  []
[]
