# SR2LinearCombination in NEML2's unit-test style: weights, no offset
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_SR2_names = 'A B'
    input_SR2_values = 'A B'
    output_SR2_names = 'C'
    output_SR2_values = 'C'
  []
[]

[Tensors]
  [A]
    type = Python
    expr = 'SR2.fill(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, dtype=torch.float64)'
  []
  [B]
    type = Python
    expr = 'SR2.fill(-1.0, -4.0, 7.0, -1.0, 9.0, 1.0, dtype=torch.float64)'
  []
  [C]
    type = Python
    expr = 'SR2.fill(2.0, 6.0, -4.0, 5.0, -4.0, 5.0, dtype=torch.float64)'
  []
[]

[Models]
  [model]
    type = SR2LinearCombination
    from = 'A B'
    to = 'C'
    weights = '1 -1'
  []
[]
