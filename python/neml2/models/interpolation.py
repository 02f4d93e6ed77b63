"""Interpolation of tabulated values: linear, bilinear and symmetric Hermite
interpolation, and the Hermite smooth step.

The tables are tensor-valued options (see :func:`~neml2.models.base.tensor_option`),
usually the names of ``[Tensors]`` blocks: an abscissa is a Scalar table of shape
``(N,)``, increasing, and an ordinate has the table's axes before its base shape,
``(N,)`` for a linear and ``(N1, N2, *base)`` for a bilinear interpolation. As in NEML2
3.1.0, a query below the first or above the last knot extrapolates the first or last
interval, and a query at an interior knot ``X[k]`` uses the interval that starts there.
The tables are parameters (``<block>.abscissa``, ``<block>.ordinate``, ...), so their
parameter Jacobians are those of the interpolant with respect to each table entry.

The Hermite functions rescale their argument to ``c = (x - lower) / (upper - lower)``,
clamped to ``[eps, 1 - eps]`` (eps the machine epsilon) as NEML2 does, so the value
and the derivative formulas are evaluated at the clamped ``c`` outside the bounds too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import ClassVar

import torch

from ..hit import Section
from ..tensors import base_shape
from .base import (
    Blocks,
    Leaf,
    Model,
    Tensors,
    Variable,
    check_distinct,
    tensor_option,
    variable_name,
)
from .block import SCALAR, Block
from .registry import register

__all__ = [
    "HermiteSmoothStep",
    "SR2BilinearInterpolation",
    "ScalarBilinearInterpolation",
    "ScalarLinearInterpolation",
    "SymmetricHermiteInterpolation",
    "VecBilinearInterpolation",
]


# --- table look-up ---------------------------------------------------------------------


def _cell(x: torch.Tensor, X: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The interval of the increasing table ``X`` (N,) that each query ``x`` falls in.

    Returns the index ``k`` of its upper knot (``1 <= k <= N - 1``; the number of knots
    at or below ``x``, clamped), its lower knot ``X[k - 1]`` and its width.
    """
    n = X.shape[-1]
    k = (x.unsqueeze(-1) >= X).sum(-1).clamp(1, n - 1)
    lower = X[k - 1]
    return k, lower, X[k] - lower


def _hat(k: torch.Tensor, n: int, lo: torch.Tensor, hi: torch.Tensor) -> torch.Tensor:
    """``(..., n)``: ``lo`` at entry ``k - 1`` and ``hi`` at entry ``k``, zero elsewhere."""
    entries = torch.arange(n, device=k.device).expand((*k.shape, n))
    upper = (entries == k.unsqueeze(-1)).to(lo.dtype)
    lower = (entries == (k - 1).unsqueeze(-1)).to(lo.dtype)
    return lower * lo.unsqueeze(-1) + upper * hi.unsqueeze(-1)


def _times_base(weights: torch.Tensor, base: tuple[int, ...], table_dims: int) -> torch.Tensor:
    """d out / d ordinate from the per-entry weights ``(..., *table)``: the block
    ``(..., *base, *table, *base)`` with ``weights * I`` over the base components."""
    if not base:
        return weights
    size = math.prod(base)
    eye = torch.eye(size, dtype=weights.dtype, device=weights.device).reshape(*base, *base)
    lead = weights.shape[: weights.dim() - table_dims]
    table = weights.shape[weights.dim() - table_dims :]
    w = weights.reshape(*lead, *([1] * len(base)), *table, *([1] * len(base)))
    e = eye.reshape(*base, *([1] * table_dims), *base)
    return w * e


def _per_base(coefficient: torch.Tensor, base: tuple[int, ...]) -> torch.Tensor:
    """A per-point coefficient ``(...)`` shaped to multiply a value ``(..., *base)``."""
    return coefficient.reshape(*coefficient.shape, *([1] * len(base)))


def _table_vector(gradient: torch.Tensor, hat: torch.Tensor, base: tuple[int, ...]) -> torch.Tensor:
    """``(..., *base, N)``: d out / d abscissa from d out / d (local coordinate) ``(..., *base)``
    and that coordinate's derivative by each knot ``(..., N)``."""
    lead = hat.shape[:-1]
    return gradient.unsqueeze(-1) * hat.reshape(*lead, *([1] * len(base)), hat.shape[-1])


def _table(section: Section, key: str, type_name: str, axes: int) -> torch.Tensor:
    """A table option with exactly ``axes`` leading axes before its base shape."""
    value = tensor_option(section, key, type_name)
    base = base_shape(type_name)
    if value.dim() != axes + len(base) or any(n < 2 for n in value.shape[:axes]):
        raise section.error(
            key,
            f"parameter '{key}': expected a {type_name} table with {axes} axis"
            f"{'es' if axes > 1 else ''} of at least 2 points before its base shape "
            f"{tuple(base)}, got shape {tuple(value.shape)}",
        )
    return value.to(Model.dtype)


def _output_name(section: Section) -> str:
    """The interpolant's variable: ``output``, else the block's name (NEML2's default)."""
    return variable_name(section, "output", section.name)


@register
class ScalarLinearInterpolation(Leaf):
    """``output`` (default: the block's name) interpolated linearly in ``argument``
    (default ``argument``) between the knots ``abscissa`` (N,) and values ``ordinate``
    (N,). Parameters ``<block>.abscissa`` and ``<block>.ordinate``."""

    type_name = "ScalarLinearInterpolation"
    options = frozenset({"argument", "output", "abscissa", "ordinate"})

    def __init__(
        self, name: str, argument: str, output: str, abscissa: torch.Tensor, ordinate: torch.Tensor
    ) -> None:
        if abscissa.shape != ordinate.shape or abscissa.dim() != 1:
            raise ValueError(
                f"{name}: abscissa {tuple(abscissa.shape)} and ordinate "
                f"{tuple(ordinate.shape)} must be tables of the same length"
            )
        self.argument, self.output = argument, output
        self.abscissa, self.ordinate = f"{name}.abscissa", f"{name}.ordinate"
        params = {self.abscissa: abscissa, self.ordinate: ordinate}
        super().__init__(name, [Variable(argument, SCALAR)], [Variable(output, SCALAR)], params)

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        names = {"argument": variable_name(section, "argument", "argument")}
        names["output"] = _output_name(section)
        check_distinct(section, names)
        X = _table(section, "abscissa", "Scalar", 1)
        Y = _table(section, "ordinate", "Scalar", 1)
        if X.shape != Y.shape:
            raise section.error(
                "ordinate",
                f"parameter 'ordinate': {Y.shape[0]} values for {X.shape[0]} abscissa points",
            )
        return cls(section.name, names["argument"], names["output"], X, Y)

    def kernel(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        arg = x[self.argument]
        X, Y = p[self.abscissa], p[self.ordinate]
        k, x0, width = _cell(arg, X)
        y0 = Y[k - 1]
        slope = (Y[k] - y0) / width
        value = y0 + slope * (arg - x0)
        if not derivatives:
            return {self.output: value}, {}, {}
        t = (arg - x0) / width
        n = X.shape[-1]
        pjac = {
            self.output: {
                self.ordinate: _hat(k, n, 1.0 - t, t),
                self.abscissa: _hat(k, n, slope * (t - 1.0), -slope * t),
            }
        }
        return {self.output: value}, {self.output: {self.argument: slope}}, pjac


class BilinearInterpolation(Leaf):
    """``output`` (default: the block's name) interpolated bilinearly in ``argument1`` and
    ``argument2`` (defaults ``argument1``, ``argument2``) on the grid ``abscissa1`` (N1,)
    x ``abscissa2`` (N2,) of values ``ordinate`` (N1, N2, *base). Parameters
    ``<block>.abscissa1``, ``<block>.abscissa2`` and ``<block>.ordinate``."""

    options = frozenset({"argument1", "argument2", "output", "abscissa1", "abscissa2", "ordinate"})
    #: NEML2's name of the ordinate's (and the output's) tensor type.
    ordinate_type: ClassVar[str]

    def __init__(
        self,
        name: str,
        arguments: tuple[str, str],
        output: str,
        abscissae: tuple[torch.Tensor, torch.Tensor],
        ordinate: torch.Tensor,
    ) -> None:
        self.base = base_shape(self.ordinate_type)
        grid = tuple(int(a.shape[0]) for a in abscissae)
        if tuple(ordinate.shape) != (*grid, *self.base):
            raise ValueError(
                f"{name}: an ordinate of shape {(*grid, *self.base)} is needed for abscissae "
                f"of {grid[0]} and {grid[1]} points, got {tuple(ordinate.shape)}"
            )
        self.arguments, self.output = arguments, output
        self.abscissae = (f"{name}.abscissa1", f"{name}.abscissa2")
        self.ordinate = f"{name}.ordinate"
        params = {self.abscissae[0]: abscissae[0], self.abscissae[1]: abscissae[1]}
        params[self.ordinate] = ordinate
        super().__init__(
            name,
            [Variable(a, SCALAR) for a in arguments],
            [Variable(output, self.base)],
            params,
        )

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        names = {
            "argument1": variable_name(section, "argument1", "argument1"),
            "argument2": variable_name(section, "argument2", "argument2"),
            "output": _output_name(section),
        }
        check_distinct(section, names)
        X1 = _table(section, "abscissa1", "Scalar", 1)
        X2 = _table(section, "abscissa2", "Scalar", 1)
        Y = _table(section, "ordinate", cls.ordinate_type, 2)
        if tuple(Y.shape[:2]) != (X1.shape[0], X2.shape[0]):
            raise section.error(
                "ordinate",
                f"parameter 'ordinate': a grid of {tuple(Y.shape[:2])} values for abscissae "
                f"of {X1.shape[0]} and {X2.shape[0]} points",
            )
        return cls(
            section.name, (names["argument1"], names["argument2"]), names["output"], (X1, X2), Y
        )

    def kernel(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        a1, a2 = (x[a] for a in self.arguments)
        X1, X2 = (p[a] for a in self.abscissae)
        Y = p[self.ordinate]
        i, lo1, w1 = _cell(a1, X1)
        j, lo2, w2 = _cell(a2, X2)
        xi, eta = (a1 - lo1) / w1, (a2 - lo2) / w2
        Y00, Y01, Y10, Y11 = Y[i - 1, j - 1], Y[i - 1, j], Y[i, j - 1], Y[i, j]
        c1, c2 = Y10 - Y00, Y01 - Y00
        c3 = Y11 - Y10 - Y01 + Y00
        bxi, beta = _per_base(xi, self.base), _per_base(eta, self.base)
        value = Y00 + c1 * bxi + c2 * beta + c3 * (bxi * beta)
        if not derivatives:
            return {self.output: value}, {}, {}
        by_xi = c1 + c3 * beta  # d value / d xi
        by_eta = c2 + c3 * bxi
        jac = {
            self.output: {
                self.arguments[0]: by_xi * _per_base(1.0 / w1, self.base),
                self.arguments[1]: by_eta * _per_base(1.0 / w2, self.base),
            }
        }
        n1, n2 = X1.shape[-1], X2.shape[-1]
        h1 = _hat(i, n1, 1.0 - xi, xi)
        h2 = _hat(j, n2, 1.0 - eta, eta)
        weights = h1.unsqueeze(-1) * h2.unsqueeze(-2)
        pjac = {
            self.output: {
                self.ordinate: _times_base(weights, self.base, 2),
                self.abscissae[0]: _table_vector(
                    by_xi, _hat(i, n1, (xi - 1.0) / w1, -xi / w1), self.base
                ),
                self.abscissae[1]: _table_vector(
                    by_eta, _hat(j, n2, (eta - 1.0) / w2, -eta / w2), self.base
                ),
            }
        }
        return {self.output: value}, jac, pjac


@register
class ScalarBilinearInterpolation(BilinearInterpolation):
    """A Scalar interpolated bilinearly; see :class:`BilinearInterpolation`."""

    type_name = "ScalarBilinearInterpolation"
    ordinate_type = "Scalar"


@register
class VecBilinearInterpolation(BilinearInterpolation):
    """A Vec interpolated bilinearly; see :class:`BilinearInterpolation`."""

    type_name = "VecBilinearInterpolation"
    ordinate_type = "Vec"


@register
class SR2BilinearInterpolation(BilinearInterpolation):
    """An SR2 (Mandel) interpolated bilinearly; see :class:`BilinearInterpolation`."""

    type_name = "SR2BilinearInterpolation"
    ordinate_type = "SR2"


# --- Hermite functions -----------------------------------------------------------------


class _Hermite(Block):
    """The shared rescaling: ``c = clamp((x - lower) / (upper - lower), eps, 1 - eps)``."""

    params_spec = (("lower_bound", None), ("upper_bound", None))

    @staticmethod
    def rescaled(
        x: torch.Tensor, p: Mapping[str, torch.Tensor]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(c, 1 / (upper - lower))``."""
        width = p["upper_bound"] - p["lower_bound"]
        eps = torch.finfo(x.dtype).eps
        return torch.clamp((x - p["lower_bound"]) / width, eps, 1.0 - eps), 1.0 / width


@register
class HermiteSmoothStep(_Hermite):
    """``value = 3 c^2 - 2 c^3`` (``1 -`` that where ``complement = true``), a smooth step
    from 0 at ``lower_bound`` to 1 at ``upper_bound``; see the module docstring for ``c``.
    Keys: ``argument``, ``value`` (defaults the same), ``complement`` (default false)."""

    type_name = "HermiteSmoothStep"
    inputs_spec = (("argument", "argument", SCALAR),)
    outputs_spec = (("value", "value", SCALAR),)
    extra_options = frozenset({"complement"})
    #: Whether the value is ``1 - step`` (set from ``complement``).
    complement: bool = False

    def configure(self, section: Section | None) -> None:
        if section is not None:
            self.complement = section.boolean("complement", False)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        c, scale = self.rescaled(x["argument"], p)
        step = 3.0 * c * c - 2.0 * c * c * c
        sign = -1.0 if self.complement else 1.0
        value = 1.0 - step if self.complement else step
        if not derivatives:
            return {"value": value}, {}, {}
        by_c = sign * 6.0 * c * (1.0 - c)  # d value / d c
        jac = {"value": {"argument": by_c * scale}}
        pjac = {
            "value": {"lower_bound": by_c * (c - 1.0) * scale, "upper_bound": -by_c * c * scale}
        }
        return {"value": value}, jac, pjac


@register
class SymmetricHermiteInterpolation(_Hermite):
    """``output = (24 c^2 - 32 c^3) / (upper - lower)`` for ``c < 1/2`` and the same in
    ``1 - c`` above, a bump of unit area; see the module docstring for ``c``. Keys:
    ``argument`` (default ``argument``), ``output`` (default: the block's name)."""

    type_name = "SymmetricHermiteInterpolation"
    inputs_spec = (("argument", "argument", SCALAR),)
    outputs_spec = (("output", None, SCALAR),)

    @classmethod
    def default_names(cls, section: Section) -> dict[str, str]:
        names = super().default_names(section)
        names.setdefault("output", section.name)
        return names

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        c, scale = self.rescaled(x["argument"], p)
        low = c < 0.5
        s = torch.where(low, c, 1.0 - c)  # the distance to the nearer bound, in [0, 1/2]
        shape = 24.0 * s * s - 32.0 * s * s * s
        value = scale * shape
        if not derivatives:
            return {"output": value}, {}, {}
        by_s = 48.0 * s - 96.0 * s * s
        by_c = torch.where(low, by_s, -by_s)  # d shape / d c
        jac = {"output": {"argument": scale * scale * by_c}}
        # value = shape(c) / w with w = upper - lower: d/d lower = (shape + by_c (c - 1)) / w^2
        pjac = {
            "output": {
                "lower_bound": scale * scale * (shape + by_c * (c - 1.0)),
                "upper_bound": -scale * scale * (shape + by_c * c),
            }
        }
        return {"output": value}, jac, pjac
