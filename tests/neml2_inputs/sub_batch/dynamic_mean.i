# The mean over the per-point axis NEML2 calls dynamic (sizes given beside the file)
[Models]
  [model]
    type = SR2DynamicMean
    from = 'a'
    to = 'b'
    dim = 0
  []
[]
