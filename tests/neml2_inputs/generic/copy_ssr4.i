# CopySSR4 between named variables
[Models]
  [model]
    type = CopySSR4
    from = 'a'
    to = 'b'
  []
[]
