# a general stiffness (orthotropic with some normal-shear and shear-shear coupling),
# Mandel components, rotated by the orientation
[Tensors]
  [T]
    type = Python
    expr = '''
      result = SSR4(torch.tensor([[210.0, 90.0, 80.0, 3.0, 0.0, 5.0],
                                  [90.0, 190.0, 70.0, 0.0, 4.0, 0.0],
                                  [80.0, 70.0, 230.0, 2.0, 0.0, 1.0],
                                  [3.0, 0.0, 2.0, 120.0, 6.0, 0.0],
                                  [0.0, 4.0, 0.0, 6.0, 110.0, 7.0],
                                  [5.0, 0.0, 1.0, 0.0, 7.0, 130.0]], dtype=torch.float64))
    '''
  []
[]
[Models]
  [model]
    type = GeneralElasticity
    elastic_stiffness_tensor = T
  []
[]
