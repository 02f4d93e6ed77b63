# KelvinVoigtElement: the default names (strain and strain_rate in, stress out)
[Models]
  [model]
    type = KelvinVoigtElement
    modulus = 1200
    viscosity = 80
  []
[]
