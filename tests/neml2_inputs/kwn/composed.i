# One KWN step for a single-species precipitate with three size bins: the number density
# per bin gives the volume fraction and the matrix concentration it leaves, which drives
# nucleation (ideal-solution driving force, barrier and critical radius, Zeldovich and
# kinetic factors, the nucleation flux) and the growth of every bin (SFFK and
# rate-limited), with an Arrhenius diffusivity
[Settings]
  [example_batch_shape]
    number_density = '(5; 3)'
  []
[]
[Tensors]
  [bins]
    type = Python
    expr = 'Scalar(torch.tensor([0.5e-9, 1.5e-9, 4.5e-9], dtype=torch.float64))'
  []
[]
[Models]
  [diffusion]
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
    diffusivities = 'diffusion'
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
    diffusivity = 'diffusion'
  []
  [model]
    type = ComposedModel
    models = 'diffusion fraction matrix driving barrier projected zeldovich kinetic flux sffk limited'
    additional_outputs = 'critical_radius'
  []
[]
