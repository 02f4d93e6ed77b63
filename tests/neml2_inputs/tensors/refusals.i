# Every way an expression or a block is refused; each block is one case.
[Tensors]
  [dunder_class]
    type = Python
    expr = 'Scalar(1.0).__class__'
  []
  [dunder_chain]
    type = Python
    expr = '().__class__.__bases__[0].__subclasses__()'
  []
  [dunder_globals]
    type = Python
    expr = 'linspace.__globals__'
  []
  [import_os]
    type = Python
    expr = '''
      import os
      result = Scalar(1.0)
    '''
  []
  [from_import]
    type = Python
    expr = '''
      x = Scalar(1.0)
      from os import path
      result = x
    '''
  []
  [dunder_import]
    type = Python
    expr = '__import__("os")'
  []
  [open_file]
    type = Python
    expr = 'open("/etc/passwd")'
  []
  [eval_call]
    type = Python
    expr = 'eval("1 + 1")'
  []
  [exec_call]
    type = Python
    expr = 'exec("x = 1")'
  []
  [getattr_call]
    type = Python
    expr = 'getattr(Scalar, "zeros")(3)'
  []
  [lambda_expr]
    type = Python
    expr = '(lambda: Scalar(1.0))()'
  []
  [builtins_name]
    type = Python
    expr = '__builtins__'
  []
  [torch_load]
    type = Python
    expr = 'torch.load("x.pt")'
  []
  [torch_save]
    type = Python
    expr = 'torch.save(Scalar(1.0).data, "x.pt")'
  []
  [torch_ops]
    type = Python
    expr = 'torch.ops'
  []
  [tensor_numpy]
    type = Python
    expr = 'torch.ones(3).numpy()'
  []
  [generator_frame]
    type = Python
    expr = '(x for x in range(2)).gi_frame'
  []
  [set_attribute]
    type = Python
    expr = '''
      x = Scalar(1.0)
      x.data = torch.ones(3)
      result = x
    '''
  []
  [function_def]
    type = Python
    expr = '''
      def f():
          return Scalar(1.0)
      result = f()
    '''
  []
  [unknown_name]
    type = Python
    expr = 'Scalar(1.0) * youngs_modulus'
  []
  [syntax_error]
    type = Python
    expr = 'Scalar(1.0 +'
  []
  [no_result]
    type = Python
    expr = '''
      x = Scalar(1.0)
      y = x * 2
    '''
  []
  [runtime_error]
    type = Python
    expr = '''
      x = Scalar(1.0)
      result = SR2.fill(1.0, 2.0)
    '''
  []
  [not_a_tensor]
    type = Python
    expr = '"text"'
  []
  [cycle_a]
    type = Python
    expr = 'cycle_b * 2'
  []
  [cycle_b]
    type = Python
    expr = 'cycle_a + Scalar(1.0)'
  []
  [self_ref]
    type = Python
    expr = 'self_ref + 1'
  []
  [unknown_type]
    type = Pythn
    expr = 'Scalar(1.0)'
  []
  [unknown_option]
    type = Python
    expr = 'Scalar(1.0)'
    exprr = 'Scalar(2.0)'
  []
  [csv_missing_file]
    type = CSVScalar
    csv_file = no_such.csv
    variable = time
  []
  [csv_missing_column]
    type = CSVSR2
    csv_file = table.csv
    variable = strain
  []
  [csv_both]
    type = CSVScalar
    csv_file = table.csv
    variable = time
    column_names = 'time'
  []
  [csv_neither]
    type = CSVScalar
    csv_file = table.csv
  []
  [csv_count]
    type = CSVVec
    csv_file = table.csv
    column_names = 'u_x u_y'
  []
  [csv_not_number]
    type = CSVScalar
    csv_file = bad_table.csv
    variable = b
  []
[]
[Models]
[]
