# CrackGeometricFunctionAT1: the default names
[Models]
  [model]
    type = CrackGeometricFunctionAT1
  []
[]
