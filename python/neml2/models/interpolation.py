"""Interpolation of tabulated values: linear, bilinear and symmetric Hermite
interpolation, and the Hermite smooth step."""
