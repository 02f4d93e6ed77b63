# the CTE from a [Tensors] block, the variables renamed
[Tensors]
  [alpha]
    type = Python
    expr = 'Scalar(2.3e-5)'
  []
[]
[Models]
  [model]
    type = ThermalDeformationJacobian
    CTE = alpha
    reference_temperature = 600
    temperature = T
    jacobian = J_thermal
  []
[]
