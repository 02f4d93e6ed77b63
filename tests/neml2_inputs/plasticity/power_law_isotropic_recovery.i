# PowerLawIsotropicHardeningStaticRecovery with the default variable names
[Models]
  [model]
    type = PowerLawIsotropicHardeningStaticRecovery
    tau = 250
    n = 2.7
  []
[]
