# CrackGeometricFunctionAT2: named variables
[Models]
  [model]
    type = CrackGeometricFunctionAT2
    phase = 'd'
    crack = 'alpha'
  []
[]
