# IdealSolutionVolumetricDrivingForce: one species (the default unit weight), its
# equilibrium concentration given by a variable
[Models]
  [model]
    type = IdealSolutionVolumetricDrivingForce
    current_concentrations = 'x'
    equilibrium_concentrations = 'x_eq'
    gas_constant = 8.314
  []
[]
