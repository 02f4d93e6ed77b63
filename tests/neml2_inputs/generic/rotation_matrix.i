# RotationMatrix of an orientation
[Models]
  [model]
    type = RotationMatrix
    from = 'orientation'
    to = 'R'
  []
[]
