# CrackGeometricFunctionAT1: named variables
[Models]
  [model]
    type = CrackGeometricFunctionAT1
    phase = 'd'
    crack = 'alpha'
  []
[]
