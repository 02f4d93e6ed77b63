# KozenyCarmanPermeability: the default names, the reference porosity a [Tensors] block
[Tensors]
  [phi0]
    type = Python
    expr = 'Scalar(0.35)'
  []
[]
[Models]
  [model]
    type = KozenyCarmanPermeability
    reference_permeability = 4.5
    reference_porosity = phi0
    n = 3
    m = 2.5
  []
[]
