"""Eigenstrains with NEML2 3.1.0's names, options and defaults:
PhaseTransformationEigenstrain and VolumeChangeEigenstrain (ThermalEigenstrain lives in
:mod:`.thermal`). Each gives an SR2 ``eigenstrain`` (Mandel), a multiple of ``I``;
every variable key defaults to its own name.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from ..tensors import base_shape
from .base import Blocks, Tensors
from .block import SCALAR, Block, identity
from .kinematics import ScalarOptions
from .registry import register

__all__ = ["PhaseTransformationEigenstrain", "VolumeChangeEigenstrain"]

SR2 = base_shape("SR2")


@register
class PhaseTransformationEigenstrain(Block):
    """``eigenstrain = phase_fraction volume_fraction_change I``."""

    type_name = "PhaseTransformationEigenstrain"
    inputs_spec = (
        ("phase_fraction", "phase_fraction", SCALAR),
        ("volume_fraction_change", "volume_fraction_change", SCALAR),
    )
    outputs_spec = (("eigenstrain", "eigenstrain", SR2),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        f, dv = x["phase_fraction"], x["volume_fraction_change"]
        eye = identity(f)
        out = {"eigenstrain": (f * dv)[..., None] * eye}
        if not derivatives:
            return out, {}, {}
        row = {"phase_fraction": dv[..., None] * eye, "volume_fraction_change": f[..., None] * eye}
        return out, {"eigenstrain": row}, {}


@register
class VolumeChangeEigenstrain(ScalarOptions):
    """``eigenstrain = ((volume / reference_volume)^(1/3) - 1) I``; ``reference_volume``
    is a constant."""

    type_name = "VolumeChangeEigenstrain"
    inputs_spec = (("volume", "volume", SCALAR),)
    outputs_spec = (("eigenstrain", "eigenstrain", SR2),)
    constants = ("reference_volume",)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        V, V0 = x["volume"], self.fixed["reference_volume"]
        ratio = V / V0
        eye = identity(V)
        out = {"eigenstrain": (ratio ** (1.0 / 3.0) - 1)[..., None] * eye}
        if not derivatives:
            return out, {}, {}
        d = (ratio ** (-2.0 / 3.0) / (3 * V0))[..., None] * eye
        return out, {"eigenstrain": {"volume": d}}, {}
