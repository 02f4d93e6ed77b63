# AvramiErofeevNucleation: the default names, order above 1
[Models]
  [model]
    type = AvramiErofeevNucleation
    coef = 1.5
    order = 2.5
  []
[]
