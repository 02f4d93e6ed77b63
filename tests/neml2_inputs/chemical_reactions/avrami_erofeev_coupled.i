# AvramiErofeevNucleation: the coefficient and the order given by variables
[Models]
  [model]
    type = AvramiErofeevNucleation
    coef = 'k'
    order = 'n'
  []
[]
