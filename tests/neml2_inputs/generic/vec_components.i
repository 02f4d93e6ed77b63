# VecComponents
[Models]
  [model]
    type = VecComponents
    from = 'v'
    to = 'vx vy vz'
  []
[]
