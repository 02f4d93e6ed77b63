# ScalarTwoStageThermalAnnealing of an isotropic hardening rate
[Models]
  [model]
    type = ScalarTwoStageThermalAnnealing
    base_rate = 'k_rate'
    base = 'k'
    temperature = 'T'
    modified_rate = 'k_rate_annealed'
    T1 = 600
    T2 = 900
    tau = 50
  []
[]
