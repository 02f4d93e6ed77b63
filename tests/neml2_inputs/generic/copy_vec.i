# CopyVec between named variables
[Models]
  [model]
    type = CopyVec
    from = 'a'
    to = 'b'
  []
[]
