[Models]
  [model]
    type = PhaseTransformationEigenstrain
    phase_fraction = martensite
    volume_fraction_change = dV
    eigenstrain = transformation_strain
  []
[]
