# FBComplementarity: both inequalities GE
[Models]
  [model]
    type = FBComplementarity
    a_inequality = 'GE'
    b_inequality = 'GE'
  []
[]
