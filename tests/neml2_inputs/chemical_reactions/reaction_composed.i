# A reacting composite: the product channel's radii set the diffusion-limited rate, which
# adds to the nucleation and contracting-geometry rates of the conversion degree; that
# rate per unit volume times the composite's volume (from its mass fractions and open
# volume fraction) is the total rate.
# Inputs: conversion_degree, solid_fraction, product_fraction, liquid_reactivity,
# solid_reactivity, w_solid, w_product, open_volume_fraction.
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
  [total]
    type = ScalarMultiplication
    from = 'reaction_rate composite_volume'
    to = 'total_rate'
  []
  [model]
    type = ComposedModel
    models = 'channel diffusion nucleation geometry rate volume total'
  []
[]
