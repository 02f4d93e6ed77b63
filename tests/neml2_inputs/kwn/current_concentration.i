# CurrentConcentration: two precipitate phases with their own concentrations
[Models]
  [model]
    type = CurrentConcentration
    precipitate_volume_fractions = 'f_beta f_theta'
    initial_concentration = 0.012
    precipitate_concentrations = '0.25 0.5'
  []
[]
