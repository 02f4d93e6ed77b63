# CopyWR2 between named variables
[Models]
  [model]
    type = CopyWR2
    from = 'a'
    to = 'b'
  []
[]
