# FBComplementarity: the other two inequalities
[Models]
  [model]
    type = FBComplementarity
    a_inequality = 'GE'
    b_inequality = 'LE'
  []
[]
