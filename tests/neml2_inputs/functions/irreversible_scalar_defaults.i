# IrreversibleScalar: the default names (from, to and to~1)
[Models]
  [model]
    type = IrreversibleScalar
  []
[]
