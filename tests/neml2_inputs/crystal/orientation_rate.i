[Models]
  [model]
    type = OrientationRate
    vorticity = w
  []
[]
