# FredrickArmstrongPlasticHardening
[Models]
  [model]
    type = FredrickArmstrongPlasticHardening
    C = 1000
    g = 10
  []
[]
