# VecConstantParameter: the output takes the block's name
[Models]
  [model]
    type = VecConstantParameter
    value = '0.905607 -2.56538 0.215292'
  []
[]
