# KocksMeckingIntercept: a value from parameters alone
[Models]
  [model]
    type = KocksMeckingIntercept
    A = -3.5
    B = -5.0
    C = -4.2
  []
[]
