# IdealSolutionVolumetricDrivingForce: one weight for both species, named temperature
# and output
[Models]
  [model]
    type = IdealSolutionVolumetricDrivingForce
    temperature = 'T'
    current_concentrations = 'c1 c2'
    equilibrium_concentrations = '5e-4 8e-4'
    gas_constant = 8.314462618
    weights = 0.5
    driving_force = 'dg'
  []
[]
