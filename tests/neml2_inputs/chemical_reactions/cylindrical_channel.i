# CylindricalChannelGeometry: the default names
[Models]
  [model]
    type = CylindricalChannelGeometry
  []
[]
