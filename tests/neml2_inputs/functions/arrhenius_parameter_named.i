# ArrheniusParameter: a named output and the default temperature
[Models]
  [model]
    type = ArrheniusParameter
    parameter = 'viscosity'
    reference_value = 0.35
    activation_energy = 1.5e4
    ideal_gas_constant = 8.31446
  []
[]
