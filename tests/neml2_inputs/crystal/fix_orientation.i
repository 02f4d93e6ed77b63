# Orientations beyond |r|^2 = 0.8 switch to their shadow set
[Models]
  [model]
    type = FixOrientation
    input = r
    output = r_fixed
    threshold = 0.8
  []
[]
