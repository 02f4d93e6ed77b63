# ProjectedDiffusivitySum: two species
[Models]
  [model]
    type = ProjectedDiffusivitySum
    far_field_concentrations = 'x_mg x_si'
    concentration_differences = '0.33 -0.21'
    diffusivities = '2.0e-18 5.0e-19'
  []
[]
