# CopyMRP between named variables
[Models]
  [model]
    type = CopyMRP
    from = 'a'
    to = 'b'
  []
[]
