# IdealSolutionVolumetricDrivingForce: a compound precipitate of two species with
# stoichiometric weights 1 and 2
[Models]
  [model]
    type = IdealSolutionVolumetricDrivingForce
    current_concentrations = 'x_mg x_si'
    equilibrium_concentrations = '2e-3 1e-3'
    gas_constant = 8.314
    weights = '1 2'
  []
[]
