"""Generic building blocks, one per NEML2 tensor type: copies, constant and input
parameters, parameters as variables, variable rates, time integration of Vec and R2,
multiplications and determinants."""
