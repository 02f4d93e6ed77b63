# ThermalEigenstrain with the expansion coefficient given by the variable 'alpha'
[Models]
  [model]
    type = ThermalEigenstrain
    reference_temperature = 293
    CTE = 'alpha'
  []
[]
