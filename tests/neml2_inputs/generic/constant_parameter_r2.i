# R2ConstantParameter with a named output
[Models]
  [model]
    type = R2ConstantParameter
    parameter = 'c'
    value = '-2.77503 -0.398126 -2.58087 -2.45572 -0.452885 1.96111 -2.25719 -1.66057 0.764599'
  []
[]
