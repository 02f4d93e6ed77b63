# ArrheniusParameter: the output named after the block
[Models]
  [model]
    type = ArrheniusParameter
    temperature = 'T'
    reference_value = 2.5e3
    activation_energy = 4.2e4
    ideal_gas_constant = 8.314
  []
[]
