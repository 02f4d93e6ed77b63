# Chemical reactions: the product channel's radii set the diffusion-limited rate (the third
# point overfills the channel, 1 - phi_s - phi_p < 0: the inner radius is clamped), beside the
# nucleation and contracting-geometry rates and the composite's effective volume (the third
# point with no open volume)
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Scalar_names = 'conversion_degree solid_fraction product_fraction liquid_reactivity solid_reactivity open_volume_fraction w_solid w_product'
    input_Scalar_values = 'a phi_s phi_p R_l R_s phi_o w_s w_p'
    output_Scalar_names = 'diffusion_rate nucleation_rate geometry_rate composite_volume'
    output_Scalar_values = 'diffusion_rate_expected nucleation_rate_expected geometry_rate_expected composite_volume_expected'
  []
[]

[Tensors]
  [a]
    type = Python
    expr = 'Scalar(torch.tensor([0.05, 0.5, 0.95], dtype=torch.float64))'
  []
  [phi_s]
    type = Python
    expr = 'Scalar(torch.tensor([0.5, 0.4, 0.3], dtype=torch.float64))'
  []
  [phi_p]
    type = Python
    expr = 'Scalar(torch.tensor([0.05, 0.35, 0.75], dtype=torch.float64))'
  []
  [R_l]
    type = Python
    expr = 'Scalar(torch.tensor([0.8, 0.8, 0.6], dtype=torch.float64))'
  []
  [R_s]
    type = Python
    expr = 'Scalar(torch.tensor([0.7, 0.7, 0.9], dtype=torch.float64))'
  []
  [phi_o]
    type = Python
    expr = 'Scalar(torch.tensor([0.1, 0.2, 0.0], dtype=torch.float64))'
  []
  [w_s]
    type = Python
    expr = 'Scalar(torch.tensor([0.7, 0.5, 0.2], dtype=torch.float64))'
  []
  [w_p]
    type = Python
    expr = 'Scalar(torch.tensor([0.3, 0.5, 0.8], dtype=torch.float64))'
  []
  [diffusion_rate_expected]
    type = Python
    expr = 'Scalar(torch.tensor([0.028516648566799824, 0.005080571696210642, 0.001778740022050653], dtype=torch.float64))'
  []
  [nucleation_rate_expected]
    type = Python
    expr = 'Scalar(torch.tensor([0.009932464110633801, 0.2596872966237629, 0.23332808197899843], dtype=torch.float64))'
  []
  [geometry_rate_expected]
    type = Python
    expr = 'Scalar(torch.tensor([0.38655301191261837, 0.25198420997897464, 0.054288352331898174], dtype=torch.float64))'
  []
  [composite_volume_expected]
    type = Python
    expr = 'Scalar(torch.tensor([0.517921146953405, 0.5544354838709677, 0.40967741935483876], dtype=torch.float64))'
  []
[]

[Models]
  [channel]
    type = CylindricalChannelGeometry
  []
  [diffusion]
    type = DiffusionLimitedReaction
    product_inner_radius = 'inner_radius'
    solid_inner_radius = 'outer_radius'
    reaction_rate = 'diffusion_rate'
    diffusion_coefficient = 2e-3
    molar_volume = 1.2
  []
  [nucleation]
    type = AvramiErofeevNucleation
    reaction_rate = 'nucleation_rate'
    coef = 0.9
    order = 1.5
  []
  [geometry]
    type = ContractingGeometry
    reaction_rate = 'geometry_rate'
    coef = 0.4
    order = 0.6666666666666666
  []
  [volume]
    type = EffectiveVolume
    open_volume_fraction = 'open_volume_fraction'
    mass_fractions = 'w_solid w_product'
    densities = '2.4 3.1'
    reference_mass = 1.2
  []
  [model]
    type = ComposedModel
    models = 'channel diffusion nucleation geometry volume'
  []
[]
