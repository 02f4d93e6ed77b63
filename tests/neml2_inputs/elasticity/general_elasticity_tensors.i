# a cubic stiffness built in [Tensors]; every variable renamed
[Tensors]
  [T]
    type = Python
    expr = 'SSR4.identity_C1(dtype=torch.float64) * 170e3 + SSR4.identity_C2(dtype=torch.float64) * 124e3 + SSR4.identity_C3(dtype=torch.float64) * 150e3'
  []
[]
[Models]
  [model]
    type = GeneralElasticity
    elastic_stiffness_tensor = T
    strain = elastic_strain
    orientation = grain_orientation
    stress = cauchy_stress
  []
[]
