"""Finite-volume transport, the sources on the cells: a Gaussian smeared about a location
(``SmearedDeltaSource``) and everything in the first cell (``DumpInSmallestBin``). The
family's overview, its base class and :data:`~.finite_volume.PROMOTABLE` are in
:mod:`.finite_volume`."""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch

from ..hit import Section
from .base import Blocks, Tensors
from .finite_volume import Shape, _CellAxis, _diag
from .registry import register

__all__ = [
    "DumpInSmallestBin",
    "SmearedDeltaSource",
]


class _Source(_CellAxis):
    """A source on the bins of ``cell_centers`` from the per-point ``magnitude``."""

    def layout(self) -> dict[str, Shape]:
        for key in ("magnitude", "location", "width"):
            if key in self.input_keys() and self.subs.get(key):
                raise ValueError(
                    f"{self.type_name} '{self.name}': input '{self.var(key)}' has sub-batch "
                    f"axes {self.subs[key]}; it is one value per point"
                )
        if "cell_centers" in self.promoted:
            n = self._need("cell_centers", "bin", 10)
        else:
            n = int(self._fixed["cell_centers"].shape[0])
        return {self.output_keys()[0]: (n,)}

    @classmethod
    def check_values(cls, section: Section, fixed: Mapping[str, torch.Tensor]) -> None:
        centers = fixed.get("cell_centers")
        if centers is not None and (centers.dim() != 1 or centers.shape[0] < 1):
            raise section.error(
                "cell_centers",
                "parameter 'cell_centers': expected a [Tensors] of cell centers (one axis), "
                f"got shape {tuple(centers.shape)}",
            )


@register
class SmearedDeltaSource(_Source):
    """``smeared_source = magnitude / (width sqrt(2 pi)) exp(-((x_k - location) /
    width)^2 / 2)`` at each cell center ``x_k``."""

    type_name = "SmearedDeltaSource"
    variables = (
        ("magnitude", "magnitude", "in"),
        ("location", "location", "in"),
        ("smeared_source", "state/smeared_source", "out"),
    )
    params_spec = (("width", None), ("cell_centers", None))
    single = frozenset({"width"})

    @classmethod
    def check_values(cls, section: Section, fixed: Mapping[str, torch.Tensor]) -> None:
        super().check_values(section, fixed)
        if "width" in fixed and float(fixed["width"]) == 0.0:
            raise section.error("width", "parameter 'width': the width must not be 0")

    def compute(self, a: Mapping[str, torch.Tensor], derivatives: bool) -> tuple[Tensors, Blocks]:
        mag, loc, w, x = a["magnitude"], a["location"], a["width"], a["cell_centers"]
        inv = (1.0 / w).unsqueeze(-1)
        arg = (x - loc.unsqueeze(-1)) * inv
        gauss = inv / math.sqrt(2.0 * math.pi) * torch.exp(-0.5 * arg * arg)
        src = mag.unsqueeze(-1) * gauss
        out = {"smeared_source": src}
        if not derivatives:
            return out, {}
        slope = src * arg * inv  # d src / d location
        d = {
            "magnitude": gauss,
            "location": slope,
            "width": src * (arg * arg - 1.0) * inv,
            "cell_centers": _diag(-slope),
        }
        return out, {"smeared_source": d}


@register
class DumpInSmallestBin(_Source):
    """``dumped_source = [magnitude, 0, ..., 0]``, one entry per cell center: the whole
    source in the first (smallest) bin."""

    type_name = "DumpInSmallestBin"
    variables = (("magnitude", "magnitude", "in"), ("dumped_source", "state/dumped_source", "out"))
    params_spec = (("cell_centers", None),)

    def compute(self, a: Mapping[str, torch.Tensor], derivatives: bool) -> tuple[Tensors, Blocks]:
        mag, x = a["magnitude"], a["cell_centers"]
        n = x.shape[1]
        first = torch.zeros(n, dtype=mag.dtype, device=mag.device)
        first[0] = 1.0
        out = {"dumped_source": mag.unsqueeze(-1) * first}
        if not derivatives:
            return out, {}
        return out, {"dumped_source": {"magnitude": first.expand(mag.shape[0], n)}}
