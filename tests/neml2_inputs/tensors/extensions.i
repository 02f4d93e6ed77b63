# Forms NEML2 3.1.0 does not evaluate but this project does (builtins inside a
# comprehension), and options that name tensors; values checked by hand.
[Tensors]
  [loop]
    type = Python
    expr = '''
      parts = [Scalar(float(i)) for i in range(4)]
      result = stack([p.dynamic_batch for p in parts])
    '''
  []
  [table]
    type = Python
    expr = 'linspace(Scalar(0.0).dynamic_batch, Scalar(1.0).dynamic_batch, 5)'
  []
  [stiffness]
    type = Python
    expr = 'SSR4.identity_sym() * 3.0'
  []
  [raw_sr2]
    type = Python
    expr = 'torch.zeros(4, 6) + 1.5'
  []
  [raw_scalar]
    type = Python
    expr = '2.5'
  []
  [strain]
    type = Python
    expr = 'SR2.fill(0.1, 0.2, 0.3)'
  []
  [rot]
    type = Python
    expr = 'MRP.fill(0.1, 0.0, 0.0)'
  []
[]
[Models]
  [model]
    type = Dummy
    E = table
    nu = raw_scalar
    C = stiffness
    eps = raw_sr2
    wrong = strain
    wrong_plain = raw_sr2
    missing = nothing_here
    r = rot
    inline = '1 2 3 4 5 6'
  []
[]
