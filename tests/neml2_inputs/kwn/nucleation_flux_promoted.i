# NucleationFluxMagnitude: a variable gives the site density; named variables
[Models]
  [model]
    type = NucleationFluxMagnitude
    zeldovich_factor = 'Z'
    kinetic_factor = 'beta'
    nucleation_barrier = 'G_star'
    temperature = 'T'
    nucleation_flux_magnitude = 'J'
    nucleation_site_density = 'N0'
    boltzmann_constant = 1.380649e-23
  []
[]
