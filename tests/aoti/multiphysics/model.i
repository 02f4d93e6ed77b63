# multiphysics: one composed model per family of NEML2's multiphysics vocabulary, side by
# side in one compiled model so that one compile covers them all (each family's model is
# also checked against NEML2 3.1.0 by python/tests; here they are compiled and dispatched):
#   reaction: a reacting composite (chemical reactions), inputs conversion_degree,
#     solid_fraction, product_fraction, liquid_reactivity, solid_reactivity, w_solid,
#     w_product, open_volume_fraction; output total_rate (and the rates on the way);
#   fracture: brittle fracture energy psi (phase-field fracture), inputs strain, phase;
#   flow: a swelling porous solid (porous flow), inputs fluid_fraction, porosity,
#     temperature, deformation_gradient, pk1_stress; outputs effective_saturation,
#     capillary_pressure, permeability, advective_stress;
#   transport: a 1D advection right-hand side c_rate over 5 cells (finite volume), inputs
#     c and v with one value per cell (a sub-batch axis of 5);
#   precipitation: one KWN step over 3 size bins (KWN precipitation), inputs temperature
#     and number_density (one per bin, a sub-batch axis of 3); outputs the nucleation
#     flux, the critical radius and two growth rates per bin.
# Compiled forward only (flags.txt: the default dtype, no derivatives), to keep CI's compile
# short: the families' derivatives are checked against NEML2 eagerly, and compiled
# Jacobians of sub-batched variables are dispatched by tests/aoti/test_vocabulary.cpp.

[Settings]
  [example_batch_shape]
    c = '(3; 5)'
    v = '(3; 5)'
    number_density = '(3; 3)'
  []
[]

[Tensors]
  [centers]
    type = Python
    expr = 'Scalar(torch.tensor([0.1, 0.3, 0.5, 0.7, 0.9], dtype=torch.float64))'
  []
  [edges]
    type = Python
    expr = 'Scalar(torch.tensor([0.0, 0.2, 0.4, 0.6, 0.8, 1.0], dtype=torch.float64))'
  []
  [bins]
    type = Python
    expr = 'Scalar(torch.tensor([0.5e-9, 1.5e-9, 4.5e-9], dtype=torch.float64))'
  []
[]

[Models]
  # reaction
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
  [rate]
    type = ScalarLinearCombination
    from = 'nucleation_rate geometry_rate diffusion_rate'
    to = 'reaction_rate'
    weights = '0.5 0.3 0.2'
  []
  [volume]
    type = EffectiveVolume
    open_volume_fraction = 'open_volume_fraction'
    mass_fractions = 'w_solid w_product'
    densities = '2.4 3.1'
    reference_mass = 1.2
  []
  [total_rate]
    type = ScalarMultiplication
    from = 'reaction_rate composite_volume'
    to = 'total_rate'
  []
  [reaction]
    type = ComposedModel
    models = 'channel diffusion nucleation geometry rate volume total_rate'
  []

  # fracture
  [degradation]
    type = RationalDegradationFunction
    power = 2
    b1 = 1.5
    b2 = -0.5
    b3 = 0
    eta = 1e-4
  []
  [energy]
    type = LinearIsotropicStrainEnergyDensity
    coefficients = '2.1e5 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    decomposition = 'VOLDEV'
  []
  [degraded]
    type = ScalarMultiplication
    from = 'degradation active_strain_energy_density'
    to = 'degraded_energy'
  []
  [crack]
    type = CrackGeometricFunctionAT2
  []
  [psi]
    type = ScalarLinearCombination
    from = 'degraded_energy inactive_strain_energy_density crack'
    to = 'psi'
    weights = '1 1 45'
  []
  [fracture]
    type = ComposedModel
    models = 'degradation energy degraded crack psi'
  []

  # flow
  [saturation]
    type = EffectiveSaturation
    residual_saturation = 0.08
    max_fraction = 0.6
  []
  [capillary]
    type = VanGenuchtenCapillaryPressure
    a = 1.5e3
    m = 0.55
    log_extension = true
    transition_saturation = 0.1
  []
  [permeability]
    type = KozenyCarmanPermeability
    reference_permeability = 1e-3
    reference_porosity = 0.3
    n = 3
    m = 3
  []
  [swelling]
    type = SwellingAndPhaseChangeDeformationJacobian
    phase_fraction = 0.3
    swelling_coefficient = 0.1
    reference_volume_difference = 0.02
    jacobian = js
  []
  [thermal]
    type = ThermalDeformationJacobian
    CTE = 1e-5
    reference_temperature = 300
    jacobian = jt
  []
  [advective]
    type = AdvectiveStress
    js = js
    jt = jt
    coefficient = 0.8
  []
  [flow]
    type = ComposedModel
    models = 'saturation capillary permeability swelling thermal advective'
    additional_outputs = 'effective_saturation'
  []

  # transport
  [velocity]
    type = LinearlyInterpolateToCellEdges
    cell_values = v
    cell_centers = centers
    cell_edges = edges
    edge_values = v_edge
  []
  [flux]
    type = FiniteVolumeUpwindedAdvectiveFlux
    u = c
    v_edge = v_edge
    flux = J
  []
  [inflow]
    type = FiniteVolumeAppendBoundaryCondition
    input = J
    bc_value = 0.4
  []
  [outflow]
    type = FiniteVolumeAppendBoundaryCondition
    input = J_with_bc_left
    output = J_all
    side = right
    bc_value = -0.1
  []
  [c_rate]
    type = FiniteVolumeGradient
    u = J_all
    grad_u = c_rate
    dx = 0.2
  []
  [transport]
    type = ComposedModel
    models = 'velocity flux inflow outflow c_rate'
  []

  # precipitation
  [arrhenius]
    type = ArrheniusParameter
    reference_value = 1.0e-4
    activation_energy = 1.6e5
    ideal_gas_constant = 8.314
  []
  [fraction]
    type = PrecipitateVolumeFraction
    radius = 'bins'
  []
  [matrix]
    type = CurrentConcentration
    precipitate_volume_fractions = 'volume_fraction'
    initial_concentration = 4.0e-3
    precipitate_concentrations = 0.25
  []
  [driving]
    type = IdealSolutionVolumetricDrivingForce
    current_concentrations = 'current_concentration'
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
    far_field_concentrations = 'current_concentration'
    concentration_differences = 0.249
    diffusivities = 'arrhenius'
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
  [nucleation_flux]
    type = NucleationFluxMagnitude
    nucleation_site_density = 6.0e28
    boltzmann_constant = 1.380649e-23
  []
  [sffk]
    type = SFFKPrecipitationGrowthRate
    radius = 'bins'
    gibbs_free_energy_difference = 'driving'
    gas_constant = 8.314
  []
  [limited]
    type = RateLimitedPrecipitateGrowthRate
    growth_rate = 'limited_growth_rate'
    radius = 'bins'
    equilibrium_concentration = 1.0e-3
    concentration_difference = 0.249
    diffusivity = 'arrhenius'
  []
  [precipitation]
    type = ComposedModel
    models = 'arrhenius fraction matrix driving barrier projected zeldovich kinetic nucleation_flux sffk limited'
    additional_outputs = 'critical_radius'
  []

  [model]
    type = ComposedModel
    models = 'reaction fracture flow transport precipitation'
  []
[]
