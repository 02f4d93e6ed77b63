# comment
[Models] # trailing
  [./model]
    type = "AOTIModel"
    artifact_path = 'my model' # quoted
    n=3
  [../]
  [other]
    type = AOTIModel
  []
[]
[Solvers]
[]
