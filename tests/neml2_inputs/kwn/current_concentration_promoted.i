# CurrentConcentration: variables give the initial concentration and the concentration
# of the one precipitate; the output renamed
[Models]
  [model]
    type = CurrentConcentration
    precipitate_volume_fractions = 'f'
    initial_concentration = 'x0'
    precipitate_concentrations = 'xp'
    current_concentration = 'x_matrix'
  []
[]
