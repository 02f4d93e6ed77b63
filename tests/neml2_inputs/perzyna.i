# PerzynaPlasticFlowRate
[Models]
  [model]
    type = PerzynaPlasticFlowRate
    reference_stress = 150
    exponent = 4
  []
[]
