# LinearIsotropicStrainEnergyDensity: the volumetric-deviatoric split, K and G, named
# variables
[Models]
  [model]
    type = LinearIsotropicStrainEnergyDensity
    strain = 'elastic_strain'
    active_strain_energy_density = 'psie_active'
    inactive_strain_energy_density = 'psie_inactive'
    coefficients = '1.4e5 8e4'
    coefficient_types = 'BULK_MODULUS SHEAR_MODULUS'
    decomposition = 'VOLDEV'
  []
[]
