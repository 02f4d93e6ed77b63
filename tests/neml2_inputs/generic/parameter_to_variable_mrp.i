# MRPParameterToVariable with the default output 'to'
[Models]
  [model]
    type = MRPParameterToVariable
    from = '0.238298 -0.0860969 -0.0808169'
  []
[]
