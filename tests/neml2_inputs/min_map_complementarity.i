# MinMapComplementarity
[Models]
  [model]
    type = MinMapComplementarity
    a = 'f'
    b = 'dep'
    complementarity = 'r'
  []
[]
