# CopyR2 between named variables
[Models]
  [model]
    type = CopyR2
    from = 'a'
    to = 'b'
  []
[]
