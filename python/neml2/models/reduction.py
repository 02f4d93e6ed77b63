"""Reductions and differences over a sub-batch axis (the dynamic and intermediate
mean, sum and difference)."""
