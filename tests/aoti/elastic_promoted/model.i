# elastic_promoted: the forward_single model with realistic moduli, compiled with
# every derivative pair and every parameter promoted (-d : -p :), so that all five
# graphs (forward, jvp, jacobian, param_jacobian, param_vjp) exist.

[Models]
  [model]
    type = LinearIsotropicElasticity
    strain = 'strain'
    stress = 'stress'
    coefficients = '100000 0.25'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
