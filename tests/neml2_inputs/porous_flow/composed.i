# A swelling porous solid: the effective saturation of the fluid sets the capillary
# pressure (van Genuchten, extended logarithmically below Se = 0.1) and the permeability
# follows the porosity (Kozeny-Carman); the fluid swells the solid and the temperature
# expands it, and the advective stress -c / (3 Js^(5/3) Jt^(2/3)) P : F follows
[Models]
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
  [model]
    type = ComposedModel
    models = 'saturation capillary permeability swelling thermal advective'
    additional_outputs = 'effective_saturation'
  []
[]
