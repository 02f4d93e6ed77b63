# KWN nucleation: the matrix concentration x sets the ideal-solution driving force, which
# gives the nucleation barrier and critical radius; with the Zeldovich and kinetic factors
# (the projected diffusivity sum of x) they give the nucleation flux. The supersaturation
# x / x_eq falls from 4 to 2.5 as the temperature rises from 600 K to 700 K. SI units:
# the Boltzmann constant and the molar volume lie far below the driver's smallest
# difference step (1e-6), so the parameter derivatives are left to test_kwn_oracle.py,
# which moves each parameter by a fraction of its own size.
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Scalar_names = 'temperature x'
    input_Scalar_values = 'T x'
    output_Scalar_names = 'critical_radius nucleation_flux_magnitude'
    output_Scalar_values = 'R_expected J_expected'
    check_AD_parameter_derivatives = false
  []
[]

[Tensors]
  [T]
    type = Python
    expr = 'Scalar(torch.tensor([600.0, 650.0, 700.0], dtype=torch.float64))'
  []
  [x]
    type = Python
    expr = 'Scalar(torch.tensor([4.0e-3, 3.0e-3, 2.5e-3], dtype=torch.float64))'
  []
  [R_expected]
    type = Python
    expr = 'Scalar(torch.tensor([2.892099753205364e-10, 3.3686986792503376e-10, 3.750495439490331e-10], dtype=torch.float64))'
  []
  [J_expected]
    type = Python
    expr = 'Scalar(torch.tensor([1.5351918721900012e+27, 3.8042612009066955e+26, 1.3730348306401665e+26], dtype=torch.float64))'
  []
[]

[Models]
  [driving]
    type = IdealSolutionVolumetricDrivingForce
    current_concentrations = 'x'
    equilibrium_concentrations = 1.0e-3
    gas_constant = 8.314
  []
  [barrier]
    type = NucleationBarrierAndCriticalRadius
    surface_energy = 0.1
    total_gibbs_free_energy_difference = 'driving'
    molar_volume = 1.0e-5
  []
  [projected]
    type = ProjectedDiffusivitySum
    far_field_concentrations = 'x'
    concentration_differences = 0.249
    diffusivities = 1.0e-18
  []
  [zeldovich]
    type = ZeldovichFactor
    surface_energy = 0.1
    molar_volume = 1.0e-5
    avogadro_number = 6.02214076e23
    boltzmann_constant = 1.380649e-23
  []
  [kinetic]
    type = KineticFactor
    molar_volume = 1.0e-5
    avogadro_number = 6.02214076e23
  []
  [flux]
    type = NucleationFluxMagnitude
    nucleation_site_density = 6.0e28
    boltzmann_constant = 1.380649e-23
  []
  [model]
    type = ComposedModel
    models = 'driving barrier projected zeldovich kinetic flux'
    additional_outputs = 'critical_radius'
  []
[]
