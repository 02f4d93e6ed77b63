# MacaulaySplit: the default variable names
[Models]
  [model]
    type = MacaulaySplit
  []
[]
