# small-strain elasticity with two eigenstrains: the stress of the strain less a phase
# transformation and a volume change eigenstrain
[Models]
  [transformation]
    type = PhaseTransformationEigenstrain
    eigenstrain = transformation_strain
  []
  [swelling]
    type = VolumeChangeEigenstrain
    reference_volume = 1.2
    eigenstrain = swelling_strain
  []
  [elastic_strain]
    type = SR2LinearCombination
    from = 'strain transformation_strain swelling_strain'
    to = elastic_strain
    weights = '1 -1 -1'
  []
  [elasticity]
    type = LinearIsotropicElasticity
    coefficients = '180e3 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    strain = elastic_strain
  []
  [model]
    type = ComposedModel
    models = 'transformation swelling elastic_strain elasticity'
  []
[]
