# CrackGeometricFunctionAT2: the default names
[Models]
  [model]
    type = CrackGeometricFunctionAT2
  []
[]
