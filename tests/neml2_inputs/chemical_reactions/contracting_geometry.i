# ContractingGeometry: the default names, a contracting cylinder (order 1/2)
[Models]
  [model]
    type = ContractingGeometry
    coef = 2.0
    order = 0.5
  []
[]
