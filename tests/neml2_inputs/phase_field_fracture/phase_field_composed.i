# Brittle fracture energy: the AT-2 crack function and the degraded active strain energy
# plus the inactive one, psi = g(d) psi_active + psi_inactive + Gc / (2 c0 l) alpha(d)
# (with c0 = 2 for AT-2: Gc / (4 l) d^2, Gc = 2.7, l = 0.015).
# Inputs: strain, phase.
[Models]
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
  [total]
    type = ScalarLinearCombination
    from = 'degraded_energy inactive_strain_energy_density crack'
    to = 'psi'
    weights = '1 1 45'
  []
  [model]
    type = ComposedModel
    models = 'degradation energy degraded crack total'
  []
[]
