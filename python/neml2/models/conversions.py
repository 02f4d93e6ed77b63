"""Conversions between NEML2 tensor types: R2ToSR2, SR2ToR2, R2ToWR2,
ScalarToDiagonalSR2, VecComponents and RotationMatrix."""
