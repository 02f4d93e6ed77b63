# BurgersElement: named strains; one rate follows its strain's name, the other is renamed
[Models]
  [model]
    type = BurgersElement
    strain = 'total'
    maxwell_viscous_strain = 'creep'
    kelvin_voigt_strain = 'delayed'
    kelvin_voigt_strain_rate = 'delayed_dot'
    stress = 'S'
    maxwell_modulus = 2e5
    maxwell_viscosity = 1e7
    kelvin_modulus = 5e4
    kelvin_viscosity = 2e5
  []
[]
