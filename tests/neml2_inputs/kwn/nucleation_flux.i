# NucleationFluxMagnitude: the default variable names
[Models]
  [model]
    type = NucleationFluxMagnitude
    nucleation_site_density = 6.0e28
    boltzmann_constant = 1.380649e-23
  []
[]
