"""Finite-volume transport, the models between cells and edges: the gradient at the
interior edges, the upwinded advective flux, a boundary value appended to the cells and
the interpolation of cell values to the edges. The family's overview, its base class and
:data:`~.finite_volume.PROMOTABLE` are in :mod:`.finite_volume`."""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch.nn.functional import pad

from ..hit import Section
from .base import Blocks, Tensors, variable_name
from .finite_volume import Shape, _CellAxis, _diag, _elementwise, _entries, _neighbours
from .registry import register

__all__ = [
    "FiniteVolumeAppendBoundaryCondition",
    "FiniteVolumeGradient",
    "FiniteVolumeUpwindedAdvectiveFlux",
    "LinearlyInterpolateToCellEdges",
]


@register
class FiniteVolumeGradient(_CellAxis):
    """``grad_u = -prefactor (u_(i+1) - u_i) / dx`` at the interior edges of the cells
    of ``u``; ``prefactor`` (default 1) one value or one per interior edge."""

    type_name = "FiniteVolumeGradient"
    variables = (("u", "u", "in"), ("grad_u", "grad_u", "out"))
    params_spec = (("prefactor", 1.0), ("dx", None))
    single = frozenset({"dx"})

    @classmethod
    def check_values(cls, section: Section, fixed: Mapping[str, torch.Tensor]) -> None:
        if float(fixed["dx"]) == 0.0:
            raise section.error("dx", "parameter 'dx': the cell spacing must not be 0")

    def layout(self) -> dict[str, Shape]:
        n = self._need("u", "cell", 10)
        if n < 2:
            raise ValueError(
                f"{self.type_name} '{self.name}': '{self.var('u')}' has {n} cell; a gradient "
                "needs at least 2"
            )
        self._agree("prefactor", n - 1, "one per interior edge")
        return {"grad_u": (n - 1,)}

    def compute(self, a: Mapping[str, torch.Tensor], derivatives: bool) -> tuple[Tensors, Blocks]:
        u, pf, dx = a["u"], a["prefactor"], a["dx"]
        m = u.shape[1] - 1
        du = u[:, 1:] - u[:, :-1]
        inv = 1.0 / dx.unsqueeze(-1)
        c = _entries(pf, m) * inv
        out = {"grad_u": -c * du}
        if not derivatives:
            return out, {}
        d = {
            "u": _neighbours(c, -c),
            "prefactor": _elementwise(-du * inv, pf),
            "dx": (c * du * inv),
        }
        return out, {"grad_u": d}


@register
class FiniteVolumeUpwindedAdvectiveFlux(_CellAxis):
    """``flux = v_edge (H u_i + (1 - H) u_(i+1))``, ``H = H(v_edge)`` (1/2 at 0): the
    value of the upwind cell carried by the velocity at each interior edge."""

    type_name = "FiniteVolumeUpwindedAdvectiveFlux"
    variables = (("u", "u", "in"), ("v_edge", "v_edge", "in"), ("flux", "flux", "out"))

    def layout(self) -> dict[str, Shape]:
        n = self._need("u", "cell", 10)
        if n < 2:
            raise ValueError(
                f"{self.type_name} '{self.name}': '{self.var('u')}' has {n} cell; a flux "
                "needs at least 2"
            )
        m = self._need("v_edge", "interior edge", n - 1)
        if m != n - 1:
            raise ValueError(
                f"{self.type_name} '{self.name}': '{self.var('v_edge')}' has {m} entries, "
                f"expected {n - 1} (one per interior edge of the {n} cells of "
                f"'{self.var('u')}')"
            )
        return {"flux": (m,)}

    def compute(self, a: Mapping[str, torch.Tensor], derivatives: bool) -> tuple[Tensors, Blocks]:
        u, v = a["u"], a["v_edge"]
        left, right = u[:, :-1], u[:, 1:]
        h = torch.heaviside(v, torch.full_like(v, 0.5))
        upwind = right + h * (left - right)
        out = {"flux": v * upwind}
        if not derivatives:
            return out, {}
        d = {"u": _neighbours(v * h, v * (1.0 - h)), "v_edge": _diag(upwind)}
        return out, {"flux": d}


@register
class FiniteVolumeAppendBoundaryCondition(_CellAxis):
    """``output = [bc_value, *input]`` (``side = left``, the default) or ``[*input,
    bc_value]`` (``right``): one entry more along the axis of ``input``."""

    type_name = "FiniteVolumeAppendBoundaryCondition"
    variables = (("input", "input", "in"), ("output", None, "out"))
    params_spec = (("bc_value", None),)
    single = frozenset({"bc_value"})
    extra_options = frozenset({"side"})

    @classmethod
    def read_settings(cls, section: Section) -> dict[str, str]:
        side = section.string("side", "left")
        if side not in ("left", "right"):
            raise section.error(
                "side", f"parameter 'side': expected 'left' or 'right', got '{side}'"
            )
        return {"side": side}

    @classmethod
    def default_names(cls, section: Section, settings: Mapping[str, str]) -> dict[str, str]:
        source = variable_name(section, "input", "input")
        target = variable_name(section, "output", f"{source}_with_bc_{settings['side']}")
        return {"input": source, "output": target}

    def layout(self) -> dict[str, Shape]:
        n = self._need("input", "cell", 10)
        return {"output": (n + 1,)}

    def compute(self, a: Mapping[str, torch.Tensor], derivatives: bool) -> tuple[Tensors, Blocks]:
        u, b = a["input"], a["bc_value"]
        n = u.shape[1]
        left = self.settings["side"] == "left"
        parts = [b.unsqueeze(-1), u] if left else [u, b.unsqueeze(-1)]
        out = {"output": torch.cat(parts, dim=1)}
        if not derivatives:
            return out, {}
        eye = torch.eye(n, dtype=u.dtype, device=u.device)
        shifted = pad(eye, (0, 0, 1, 0) if left else (0, 0, 0, 1))
        end = torch.zeros(n + 1, dtype=u.dtype, device=u.device)
        end[0 if left else n] = 1.0
        batch = u.shape[0]
        d = {
            "input": shifted.expand(batch, n + 1, n),
            "bc_value": end.expand(batch, n + 1),
        }
        return out, {"output": d}


@register
class LinearlyInterpolateToCellEdges(_CellAxis):
    """``edge_values`` at the interior edges by linear interpolation between the centers
    of the cells on either side: ``w_l q_i + w_r q_(i+1)``, ``w_r = (xe_(i+1) - x_i) /
    (x_(i+1) - x_i)``, ``w_l = 1 - w_r``."""

    type_name = "LinearlyInterpolateToCellEdges"
    variables = (("edge_values", "edge_values", "out"),)
    params_spec = (("cell_values", None), ("cell_centers", None), ("cell_edges", None))

    @classmethod
    def check_values(cls, section: Section, fixed: Mapping[str, torch.Tensor]) -> None:
        centers = fixed["cell_centers"]
        if centers.dim() != 1 or centers.shape[0] < 2:
            raise section.error(
                "cell_centers",
                "parameter 'cell_centers': expected a [Tensors] of at least 2 cell centers, "
                f"got shape {tuple(centers.shape)}",
            )
        if bool((centers[1:] == centers[:-1]).any()):
            raise section.error(
                "cell_centers", "parameter 'cell_centers': two neighbouring centers coincide"
            )
        n = centers.shape[0]
        if tuple(fixed["cell_edges"].shape) != (n + 1,):
            raise section.error(
                "cell_edges",
                f"parameter 'cell_edges': expected {n + 1} edges for {n} cell centers, got "
                f"shape {tuple(fixed['cell_edges'].shape)}",
            )
        values = fixed.get("cell_values")
        if values is not None and values.dim() == 1 and values.shape[0] != n:
            raise section.error(
                "cell_values",
                f"parameter 'cell_values': expected {n} values (one per cell center), got "
                f"{values.shape[0]}",
            )

    def layout(self) -> dict[str, Shape]:
        n = int(self._fixed["cell_centers"].shape[0])
        if "cell_values" in self.promoted:
            self.subs.setdefault("cell_values", (n,))
            self._agree("cell_values", n, "one per cell center")
        return {"edge_values": (n - 1,)}

    def compute(self, a: Mapping[str, torch.Tensor], derivatives: bool) -> tuple[Tensors, Blocks]:
        x, xe = a["cell_centers"], a["cell_edges"][:, 1:-1]
        m = x.shape[1] - 1
        q = a["cell_values"]
        qv = _entries(q, m + 1)
        left, right = qv[:, :-1], qv[:, 1:]
        xl, xr = x[:, :-1], x[:, 1:]
        inv = 1.0 / (xr - xl)
        wr = (xe - xl) * inv
        wl = (xr - xe) * inv
        du = right - left
        out = {"edge_values": wl * left + wr * right}
        if not derivatives:
            return out, {}
        inv2 = inv * inv
        dq = _neighbours(wl, wr) if q.dim() == 2 else wl + wr
        d = {
            "cell_values": dq,
            "cell_centers": _neighbours(-(xr - xe) * inv2 * du, -(xe - xl) * inv2 * du),
            "cell_edges": pad(_diag(inv * du), (1, 1)),
        }
        return out, {"edge_values": d}
