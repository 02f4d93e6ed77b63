# eigenstrain = f dV I
[Models]
  [model]
    type = PhaseTransformationEigenstrain
  []
[]
