# an anisotropic Saint Venant-Kirchhoff solid whose thermal and swelling volume changes
# are taken out of the deformation gradient: Fe = (J_T J_s)^(-1/3) F, the elastic
# Green-Lagrange strain E_e = (Fe^T Fe - I) / 2, and the stress S = (Q C Q^T) E_e of a
# cubic stiffness C rotated by the grain orientation
[Tensors]
  [C]
    type = Python
    expr = '''
      C1 = SSR4.identity_C1(dtype=torch.float64)
      C2 = SSR4.identity_C2(dtype=torch.float64)
      C3 = SSR4.identity_C3(dtype=torch.float64)
      result = C1 * 168e3 + C2 * 121e3 + C3 * 150e3
    '''
  []
[]
[Models]
  [thermal]
    type = ThermalDeformationJacobian
    CTE = 1.2e-5
    reference_temperature = 300
    jacobian = J_thermal
  []
  [swelling]
    type = SwellingAndPhaseChangeDeformationJacobian
    phase_fraction = 0.4
    swelling_coefficient = 0.08
    reference_volume_difference = 0.03
    jacobian = J_swelling
  []
  [volume]
    type = ScalarMultiplication
    from = 'J_thermal J_swelling'
    to = J
  []
  [adjust]
    type = VolumeAdjustDeformationGradient
    input = deformation_gradient
    jacobian = J
    output = elastic_deformation_gradient
  []
  [strain]
    type = GreenLagrangeStrain
    deformation_gradient = elastic_deformation_gradient
    strain = elastic_strain
  []
  [elasticity]
    type = GeneralElasticity
    elastic_stiffness_tensor = C
    strain = elastic_strain
  []
  [model]
    type = ComposedModel
    models = 'thermal swelling volume adjust strain elasticity'
  []
[]
