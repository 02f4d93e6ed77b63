# A ScalarConstantParameter and a VecConstantParameter feeding models of a ComposedModel
[Models]
  [k]
    type = ScalarConstantParameter
    value = 1.75
  []
  [product]
    type = ScalarMultiplication
    from = 'k x'
    to = 'y'
    reciprocal = 'false true'
  []
  [offset]
    type = VecConstantParameter
    value = '0.5 -1 2'
    parameter = 'v0'
  []
  [rate]
    type = VecVariableRate
    variable = 'v0'
  []
  [model]
    type = ComposedModel
    models = 'k product offset rate'
  []
[]
