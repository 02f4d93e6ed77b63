# CylindricalChannelGeometry: named variables
[Models]
  [model]
    type = CylindricalChannelGeometry
    solid_fraction = 'phi_s'
    product_fraction = 'phi_p'
    inner_radius = 'ri'
    outer_radius = 'ro'
  []
[]
