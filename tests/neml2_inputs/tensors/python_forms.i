# [Tensors] of type Python: every expression form this project reads, checked against NEML2.
[Tensors]
  [sr2_fill6]
    type = Python
    expr = 'SR2.fill(1, 2, 3, 4, 5, 6)'
  []
  [sr2_fill3]
    type = Python
    expr = 'SR2.fill(1, 2, 3)'
  []
  [sr2_fill1]
    type = Python
    expr = 'SR2.fill(2.5)'
  []
  [scalar_list]
    type = Python
    expr = 'Scalar([1.0, 2.0, 4.0])'
  []
  [scalar_full]
    type = Python
    expr = 'Scalar.full(4, fill_value=2.5)'
  []
  [vec_fill]
    type = Python
    expr = 'Vec.fill(1, -2, 3)'
  []
  [r2_fill]
    type = Python
    expr = 'R2.fill(1, 2, 3, 4, 5, 6, 7, 8, 9)'
  []
  [r2_identity]
    type = Python
    expr = 'R2.identity() @ r2_fill'
  []
  [ssr4_dev]
    type = Python
    expr = 'SSR4.identity_dev()'
  []
  [ssr4_apply]
    type = Python
    expr = 'SSR4.identity_sym() @ sr2_fill6 * 2'
  []
  [sr2_zeros]
    type = Python
    expr = 'SR2.zeros(2) + SR2.ones(2)'
  []
  [wr2_fill]
    type = Python
    expr = 'WR2.fill(0.1, 0.2, 0.3)'
  []
  [scalar_arith]
    type = Python
    expr = 'Scalar(3) ** 2 - 1 + 2 / Scalar(4)'
  []
  [scalar_times_sr2]
    type = Python
    expr = 'Scalar(2) * SR2.identity() + SR2.fill(1)'
  []
  [lin_dynamic]
    type = Python
    expr = 'linspace(Scalar([1.0, 2.0]).dynamic_batch, Scalar([3.0, 4.0]).dynamic_batch, 3)'
  []
  [lin_sub]
    type = Python
    expr = 'linspace(Scalar([1.0, 2.0]).sub_batch, Scalar([3.0, 4.0]).sub_batch, 3)'
  []
  [lin_dim]
    type = Python
    expr = 'linspace(Scalar([1.0, 2.0]).dynamic_batch, Scalar([3.0, 4.0]).dynamic_batch, 3, dim=-1)'
  []
  [lin_sr2]
    type = Python
    expr = 'linspace(SR2.fill(0.0).dynamic_batch, SR2.fill(1, 2, 3).dynamic_batch, 5)'
  []
  [log_sub]
    type = Python
    expr = 'logspace(Scalar(-2).sub_batch, Scalar(1).sub_batch, 4)'
  []
  [retag]
    type = Python
    expr = 'Scalar.zeros(5).sub_batch.retag(1)'
  []
  [expand]
    type = Python
    expr = 'SR2.fill(1, 2, 3).dynamic_batch.expand(4)'
  []
  [stacked]
    type = Python
    expr = 'stack([Vec.fill(1, 0, 0).dynamic_batch, Vec.fill(0, 1, 0).dynamic_batch])'
  []
  [mrp]
    type = Python
    expr = 'MRP.from_axis_angle(Vec.fill(0, 0, 1), Scalar(math.pi / 2))'
  []
  [quat]
    type = Python
    expr = 'Quaternion.identity()'
  []
  [miller]
    type = Python
    expr = 'MillerIndex(torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]))'
  []
  [plain_torch]
    type = Python
    expr = 'torch.linspace(0.0, 1.0, 5) ** 2 + math.sqrt(4.0)'
  []
  [block]
    type = Python
    expr = '''
      E = Scalar(200000.0)
      nu = 0.3
      result = E / (2 * (1 + nu))
    '''
  []
  [cross_ref]
    type = Python
    expr = 'block * 2 + scalar_list'
  []
  [functions]
    type = Python
    expr = 'exp(Scalar(1.0)) + tr(sr2_fill6) + norm(vec_fill) + sqrt(Scalar(9.0))'
  []
  [dev_sr2]
    type = Python
    expr = 'dev(sr2_fill6)'
  []
  [sym_r2]
    type = Python
    expr = 'sym(r2_fill)'
  []
  [skew_r2]
    type = Python
    expr = 'skew(r2_fill)'
  []
[]
[Models]
[]
