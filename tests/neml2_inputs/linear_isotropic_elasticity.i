# LinearIsotropicElasticity in NEML2's unit-test style
[Drivers]
  [unit]
    type = ModelUnitTest
    model = 'model'
    input_SR2_names = 'strain'
    input_SR2_values = 'E'
    output_SR2_names = 'stress'
    output_SR2_values = 'S'
  []
[]

[Tensors]
  [E]
    type = Python
    expr = 'SR2.fill(0.09, 0.04, -0.02, dtype=torch.float64)'
  []
  [S]
    type = Python
    expr = 'SR2.fill(13.2692, 9.4231, 4.8077, dtype=torch.float64)'
  []
[]

[Models]
  [model]
    type = LinearIsotropicElasticity
    coefficients = '100 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
    strain = 'strain'
    stress = 'stress'
  []
[]
