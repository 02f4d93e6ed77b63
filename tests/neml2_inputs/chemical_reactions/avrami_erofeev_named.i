# AvramiErofeevNucleation: named variables, order below 1
[Models]
  [model]
    type = AvramiErofeevNucleation
    conversion_degree = 'alpha'
    reaction_rate = 'alpha_rate'
    coef = 0.8
    order = 0.5
  []
[]
