# ModeMixity: the default names
[Models]
  [model]
    type = ModeMixity
  []
[]
