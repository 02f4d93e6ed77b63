"""Scalar functions: p-norms, the Macaulay split, the Fischer-Burmeister
complementarity, the irreversible scalar, the Arrhenius parameter and the mixed
control setup."""
