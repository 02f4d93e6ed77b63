"""Exponential time integration of an orientation (MRP) by a spin (WR2).

``WR2ExplicitExponentialTimeIntegration`` updates ``variable = exp((t - t~1) rate) o
variable~1`` and ``WR2ImplicitExponentialTimeIntegration`` gives the residual
``variable_residual = variable - exp((t - t~1) rate) o variable~1``, ``o`` being the
composition of rotations and ``exp`` NEML2's exponential map of a spin
(:func:`~neml2.tensors.wr2_exp_map`). The names follow :mod:`.time_integration`:
``<variable>~1``, ``<variable>_rate`` (or ``rate``), ``t`` (or ``time``) and ``t~1``.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from ..tensors import (
    base_shape,
    identity_block,
    mrp_compose,
    mrp_compose_derivatives,
    per_point,
    wr2_exp_map,
    wr2_exp_map_derivative,
)
from .base import Blocks, Tensors
from .registry import register
from .time_integration import _BackwardEuler, _ForwardEuler


def _step(
    x: Mapping[str, torch.Tensor], derivatives: bool
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """``exp(dt rate) o v~1`` and, when asked, its derivatives by role."""
    dt = x["t"] - x["t~1"]
    rate, old = x["rate"], x["v~1"]
    spin = dt[:, None] * rate
    inc = wr2_exp_map(spin)
    new = mrp_compose(inc, old)
    if not derivatives:
        return new, {}
    d_inc, d_old = mrp_compose_derivatives(inc, old)
    d_spin = torch.matmul(d_inc, wr2_exp_map_derivative(spin))
    d_t = torch.matmul(d_spin, rate[..., None])[..., 0]
    return new, {"v~1": d_old, "rate": dt[:, None, None] * d_spin, "t": d_t, "t~1": -d_t}


@register
class WR2ExplicitExponentialTimeIntegration(_ForwardEuler):
    """``variable = exp((t - t~1) variable_rate) o variable~1`` (MRP; the rate a WR2)."""

    type_name = "WR2ExplicitExponentialTimeIntegration"
    shape = base_shape("MRP")
    options = frozenset({"variable", "time", "rate"})

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        new, d = _step(x, derivatives)
        return {"v": new}, ({"v": d} if derivatives else {}), {}


@register
class WR2ImplicitExponentialTimeIntegration(_BackwardEuler):
    """``variable_residual = variable - exp((t - t~1) variable_rate) o variable~1``
    (MRP; the rate a WR2)."""

    type_name = "WR2ImplicitExponentialTimeIntegration"
    shape = base_shape("MRP")
    options = frozenset({"variable", "time", "rate", "variable_residual"})

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        v = x["v"]
        new, d = _step(x, derivatives)
        out = {"residual": v - new}
        if not derivatives:
            return out, {}, {}
        row = {k: -b for k, b in d.items()}
        row["v"] = per_point(identity_block(self.shape, v), v.shape[0])
        return out, {"residual": row}, {}
