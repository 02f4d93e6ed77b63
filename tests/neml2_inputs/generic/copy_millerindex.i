# CopyMillerIndex between named variables
[Models]
  [model]
    type = CopyMillerIndex
    from = 'a'
    to = 'b'
  []
[]
