# MacaulaySplit: both sides of the kink and the kink itself
[Models]
  [model]
    type = MacaulaySplit
    from = 'f'
    to_positive = 'f_plus'
    to_negative = 'f_minus'
  []
[]
