# thermoelastic: linear thermo-elasticity written as a composition of three models,
# chained by variable name: the thermal strain of ThermalEigenstrain is subtracted from
# the total strain, and LinearIsotropicElasticity maps the rest to the stress. The
# composed model's inputs are strain and temperature; its output is stress.
# Compiled with every derivative pair and every parameter promoted (-d : -p :), the
# in-place forward (--into forward), and a host code's names (flags.txt): strain is eps,
# stress is sigma, elastic.E is E and thermal.alpha is alpha in the compiled artifact.

E = 200000

[Models]
  [thermal]
    type = ThermalEigenstrain
    temperature = 'temperature'
    eigenstrain = 'thermal_strain'
    alpha = 1.2e-5
    T0 = 293.15
  []
  [mechanical]
    type = SR2LinearCombination
    from = 'strain thermal_strain'
    to = 'mechanical_strain'
    coefficients = '1 -1'
  []
  [elastic]
    type = LinearIsotropicElasticity
    strain = 'mechanical_strain'
    stress = 'stress'
    coefficients = '${E} 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
  [model]
    type = ComposedModel
    models = 'thermal mechanical elastic'
  []
[]
