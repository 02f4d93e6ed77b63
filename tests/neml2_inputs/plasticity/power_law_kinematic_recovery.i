# PowerLawKinematicHardeningStaticRecovery with its rate named explicitly
[Models]
  [model]
    type = PowerLawKinematicHardeningStaticRecovery
    back_stress = 'X'
    back_stress_rate = 'X_recovery'
    tau = 300
    n = 3.5
  []
[]
