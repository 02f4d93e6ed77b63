# J = 1 + CTE (T - T0)
[Models]
  [model]
    type = ThermalDeformationJacobian
    CTE = 1.7e-5
    reference_temperature = 293.15
  []
[]
