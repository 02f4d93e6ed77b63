# Porous flow: the effective saturation of the fluid sets the Brooks-Corey capillary
# pressure (extended logarithmically below Se = 0.05: the first point, Se = -0.022), and
# the porosity the Kozeny-Carman permeability
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Scalar_names = 'fluid_fraction porosity'
    input_Scalar_values = 'f phi'
    output_Scalar_names = 'capillary_pressure permeability'
    output_Scalar_values = 'Pc_expected K_expected'
  []
[]

[Tensors]
  [f]
    type = Python
    expr = 'Scalar(torch.tensor([0.04, 0.2, 0.45], dtype=torch.float64))'
  []
  [phi]
    type = Python
    expr = 'Scalar(torch.tensor([0.1, 0.3, 0.45], dtype=torch.float64))'
  []
  [Pc_expected]
    type = Python
    expr = 'Scalar(torch.tensor([46040.72226183167, 8660.254037844386, 5303.300858899106], dtype=torch.float64))'
  []
  [K_expected]
    type = Python
    expr = 'Scalar(torch.tensor([3.485241070974954e-14, 2.0000000000000008e-12, 1.3915852742299022e-11], dtype=torch.float64))'
  []
[]

[Models]
  [saturation]
    type = EffectiveSaturation
    residual_saturation = 0.1
    max_fraction = 0.5
  []
  [capillary]
    type = BrooksCoreyCapillaryPressure
    threshold_pressure = 5e3
    exponent = 2
    log_extension = true
    transition_saturation = 0.05
  []
  [permeability]
    type = KozenyCarmanPermeability
    reference_permeability = 2e-12
    reference_porosity = 0.3
    n = 3
    m = 3
  []
  [model]
    type = ComposedModel
    models = 'saturation capillary permeability'
  []
[]
