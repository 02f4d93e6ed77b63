# AssociativePlasticFlow
[Models]
  [model]
    type = AssociativePlasticFlow
  []
[]
