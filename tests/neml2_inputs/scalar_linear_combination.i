# ScalarLinearCombination in NEML2's unit-test style: weights and offset
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_Scalar_names = 'A B'
    input_Scalar_values = '3 2'
    output_Scalar_names = 'C'
    output_Scalar_values = '-3'
  []
[]

[Models]
  [model]
    type = ScalarLinearCombination
    from = 'A B'
    to = 'C'
    weights = '-1.5 0.5'
    offset = 0.5
  []
[]
