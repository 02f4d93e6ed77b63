[Models]
  [model]
    type = AOTIModel
    artifact_path = model
    type = again
  []
