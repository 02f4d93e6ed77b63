# SR2TwoStageThermalAnnealing of a back stress rate, default variable names
[Models]
  [model]
    type = SR2TwoStageThermalAnnealing
    T1 = 500
    T2 = 700
    tau = 20
  []
[]
