"""Two-stage thermal annealing of a hardening rate, NEML2's ``ScalarTwoStageThermalAnnealing``
and ``SR2TwoStageThermalAnnealing``.

``modified_rate = [T < T1] base_rate - [T >= T2] base / tau``: below ``T1`` the hardening
rate is kept, between ``T1`` and ``T2`` it is zero, and from ``T2`` on the hardening
variable ``base`` recovers at the rate ``1 / tau``. Both switches are steps, so the
output does not depend on ``temperature`` where it is differentiable.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from .base import Blocks, Tensors
from .block import SCALAR, SR2, Block
from .registry import register


class _TwoStageThermalAnnealing(Block):
    """The shared rule; subclasses give the shape of ``base`` and its rate."""

    params_spec = (("T1", None), ("T2", None), ("tau", None))

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        rate, base, T = x["base_rate"], x["base"], x["temperature"]
        tau = p["tau"]
        T1, T2 = p["T1"], p["T2"]
        keep = (T < T1).to(T.dtype)
        recover = 1 - (T < T2).to(T.dtype)
        if base.dim() > 1:
            eye = torch.eye(6, dtype=T.dtype).to(T.device)
            d_rate, d_base = keep.reshape(-1, 1, 1) * eye, (-recover / tau).reshape(-1, 1, 1) * eye
            keep, recover = keep.unsqueeze(-1), recover.unsqueeze(-1)
        else:
            d_rate, d_base = keep, -recover / tau
        out = keep * rate - recover * base / tau
        jac = {"modified_rate": {"base_rate": d_rate, "base": d_base}}
        pjac = {"modified_rate": {"tau": recover * base / (tau * tau)}}
        return {"modified_rate": out}, jac, pjac


@register
class ScalarTwoStageThermalAnnealing(_TwoStageThermalAnnealing):
    """Two-stage thermal annealing of a Scalar hardening variable."""

    type_name = "ScalarTwoStageThermalAnnealing"
    inputs_spec = (
        ("base_rate", "base_rate", SCALAR),
        ("base", "base", SCALAR),
        ("temperature", "temperature", SCALAR),
    )
    outputs_spec = (("modified_rate", "modified_rate", SCALAR),)


@register
class SR2TwoStageThermalAnnealing(_TwoStageThermalAnnealing):
    """Two-stage thermal annealing of an SR2 hardening variable (a back stress, say)."""

    type_name = "SR2TwoStageThermalAnnealing"
    inputs_spec = (
        ("base_rate", "base_rate", SR2),
        ("base", "base", SR2),
        ("temperature", "temperature", SCALAR),
    )
    outputs_spec = (("modified_rate", "modified_rate", SR2),)
