# ProjectedDiffusivitySum: variables give one concentration difference and one
# diffusivity; the output renamed
[Models]
  [model]
    type = ProjectedDiffusivitySum
    far_field_concentrations = 'xa xb'
    concentration_differences = 'dxa 0.4'
    diffusivities = '1.0e-18 Db'
    projected_diffusivity_sum = 'psum'
  []
[]
