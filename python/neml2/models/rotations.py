"""Rotations in time: the explicit and implicit exponential time integration of
an orientation by a spin (WR2)."""
