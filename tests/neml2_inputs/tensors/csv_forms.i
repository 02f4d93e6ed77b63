# [Tensors] read from a CSV file: by variable prefix and by explicit column names.
[Tensors]
  [T]
    type = CSVScalar
    csv_file = table.csv
    variable = temperature
  []
  [times]
    type = CSVScalar
    csv_file = 'table.csv'
    column_names = 'time'
  []
  [stress]
    type = CSVSR2
    csv_file = table.csv
    variable = stress
  []
  [stress_by_name]
    type = CSVSR2
    csv_file = table.csv
    column_names = 'stress_xx stress_yy stress_zz stress_yz stress_xz stress_xy'
  []
  [u]
    type = CSVVec
    csv_file = table.csv
    variable = u
  []
  [w]
    type = CSVWR2
    csv_file = table.csv
    variable = w
  []
[]
[Models]
[]
