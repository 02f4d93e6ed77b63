# AssociativeJ2FlowDirection with its default variable names
[Models]
  [model]
    type = AssociativeJ2FlowDirection
  []
[]
