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
    type = FillSR2
    values = '1 2 3 4 5 6'
  []
  [B]
    type = FillSR2
    values = '-1 -4 7 -1 9 1'
  []
  [C]
    type = FillSR2
    values = '2 6 -4 5 -4 5'
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
