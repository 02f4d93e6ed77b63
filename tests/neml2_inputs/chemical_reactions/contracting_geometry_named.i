# ContractingGeometry: named variables, a contracting sphere (order 2/3)
[Models]
  [model]
    type = ContractingGeometry
    conversion_degree = 'a'
    reaction_rate = 'f'
    coef = 0.3
    order = 0.6666666666666666
  []
[]
