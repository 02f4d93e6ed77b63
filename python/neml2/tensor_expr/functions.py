"""The free functions of tensor expressions: ``linspace``, ``logspace``, ``stack`` and
``cat`` over region views, the algebraic ones (``tr``, ``dev``, ``norm``, ``inv``, ...) and
the elementwise ones, collected by name in ``_FREE_FUNCTIONS``."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable
from typing import Any

import torch

from ..tensors import full_to_sr2, full_to_wr2, sr2_to_full, wr2_to_full
from .tensor_types import MRP, R2, SR2, SSR4, WR2, Vec
from .typed import DTYPE, Region, Scalar, TypedTensor


def _views(views: Iterable[Any], what: str) -> list[Region]:
    items = list(views)
    if not items or not all(isinstance(v, Region) for v in items):
        raise TypeError(f"{what} takes region views (x.dynamic_batch or x.sub_batch)")
    kinds = {(v.kind, type(v.tensor)) for v in items}
    if len(kinds) != 1:
        raise TypeError(f"{what}: the views differ in region or type")
    return items


def stack(views: Iterable[Region], dim: int = 0) -> Any:
    """Stack along a new axis at position ``dim`` of the views' region."""
    items = _views(views, "stack")
    first = items[0]
    if first.kind not in ("dynamic_batch", "sub_batch"):
        raise TypeError("stack takes dynamic_batch or sub_batch views")
    if any(v.tensor.sub_batch_ndim != first.tensor.sub_batch_ndim for v in items):
        raise ValueError("stack: the tensors differ in sub_batch_ndim")
    data = torch.stack([v.tensor.data for v in items], first.insert_axis(dim))
    return first.tensor._new(data, first.sub_after(1))


def cat(views: Iterable[Region], dim: int = -1) -> Any:
    """Concatenate along the views' region axis ``dim``."""
    items = _views(views, "cat")
    first = items[0]
    data = torch.cat([v.tensor.data for v in items], first.axis(dim))
    return first.tensor._new(data)


def linspace(start: Region, end: Region, nstep: int, dim: int = 0) -> Any:
    """``nstep`` evenly spaced values from ``start`` to ``end`` along a new axis of the
    endpoints' region (``x.dynamic_batch`` or ``x.sub_batch``) at position ``dim``."""
    if not isinstance(start, Region) or not isinstance(end, Region) or start.kind != end.kind:
        raise TypeError("linspace takes two views of the same region (x.dynamic_batch, ...)")
    if nstep < 1:
        raise ValueError(f"linspace: nstep must be >= 1, got {nstep}")
    a, b = start.tensor, end.tensor
    delta = b - a
    points = [a + (i / (nstep - 1) if nstep > 1 else 0.0) * delta for i in range(nstep)]
    return stack([Region(p, start.kind) for p in points], dim)


def logspace(start: Region, end: Region, nstep: int, dim: int = 0, base: float = 10.0) -> Any:
    """``base`` to the powers of :func:`linspace` of the exponents ``start`` to ``end``."""
    exponent = linspace(start, end, nstep, dim)
    return exponent._new(float(base) ** exponent.data)


def _elementwise(name: str, fn: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[Any], Any]:
    def apply(x: Any) -> Any:
        if isinstance(x, TypedTensor):
            return x._new(fn(x.data))
        if isinstance(x, torch.Tensor):
            return fn(x)
        return fn(torch.as_tensor(x, dtype=DTYPE))

    apply.__name__ = name
    apply.__doc__ = f"Elementwise {name} of a typed tensor, a tensor or a number."
    return apply


def abs(x: Any) -> Any:
    """Elementwise absolute value; a number's as the builtin."""
    if isinstance(x, (TypedTensor, torch.Tensor)):
        return x.abs() if isinstance(x, torch.Tensor) else x._new(x.data.abs())
    return builtins.abs(x)


def pow(a: Any, n: Any) -> Any:
    """Elementwise power."""
    return a**n


def _typed(x: Any, *types: type[TypedTensor]) -> TypedTensor:
    if not isinstance(x, types):
        names = " or ".join(t.TYPE for t in types)
        raise TypeError(f"expected {names}, got {getattr(x, 'TYPE', type(x).__name__)}")
    return x


def tr(a: SR2 | R2) -> Scalar:
    """The trace."""
    t = _typed(a, SR2, R2)
    d = t.data[..., :3].sum(-1) if isinstance(t, SR2) else t.data.diagonal(0, -2, -1).sum(-1)
    return Scalar(d, t.sub_batch_ndim)


def vol(a: SR2 | R2) -> Any:
    """The volumetric part ``tr(a) / 3 I``."""
    t = a if isinstance(a, (SR2, R2)) else _typed(a, SR2, R2)
    return tr(t) / 3.0 * t.identity()


def dev(a: SR2 | R2) -> Any:
    """The deviatoric part ``a - vol(a)``."""
    return a - vol(a)


def sym(a: R2) -> SR2:
    """The symmetric part of an R2, as an SR2."""
    t = _typed(a, R2)
    return SR2(full_to_sr2(t.data), t.sub_batch_ndim)


def skew(a: R2) -> WR2:
    """The skew part of an R2, as a WR2."""
    t = _typed(a, R2)
    return WR2(full_to_wr2(t.data), t.sub_batch_ndim)


def r2_from_sr2(a: SR2) -> R2:
    """An SR2 as a full R2."""
    t = _typed(a, SR2)
    return R2(sr2_to_full(t.data), t.sub_batch_ndim)


def r2_from_wr2(a: WR2) -> R2:
    """A WR2 as a full skew R2."""
    t = _typed(a, WR2)
    return R2(wr2_to_full(t.data), t.sub_batch_ndim)


def norm(a: SR2 | Vec, eps: float = 0.0) -> Scalar:
    """The Frobenius (SR2) or Euclidean (Vec) norm, ``sqrt(|a|^2 + eps)``."""
    t = _typed(a, SR2, Vec)
    return Scalar(torch.sqrt((t.data * t.data).sum(-1) + eps), t.sub_batch_ndim)


def unit(a: SR2 | Vec, eps: float = 0.0) -> Any:
    """``a`` divided by its norm."""
    return a / norm(a, eps)


def det(a: R2 | SR2) -> Scalar:
    """The determinant."""
    t = _typed(a, R2, SR2)
    full = t.data if isinstance(t, R2) else sr2_to_full(t.data)
    return Scalar(torch.linalg.det(full), t.sub_batch_ndim)


def inv(a: R2 | SR2) -> Any:
    """The inverse."""
    t = _typed(a, R2, SR2)
    if isinstance(t, R2):
        return R2(torch.linalg.inv(t.data), t.sub_batch_ndim)
    return SR2(full_to_sr2(torch.linalg.inv(sr2_to_full(t.data))), t.sub_batch_ndim)


def outer(a: SR2, b: SR2) -> SSR4:
    """The tensor product of two SR2, an SSR4."""
    x, y = _typed(a, SR2), _typed(b, SR2)
    p, q, sub = x._aligned(y)
    return SSR4(p.unsqueeze(-1) * q.unsqueeze(-2), sub)


def inner(a: TypedTensor, b: TypedTensor) -> Scalar:
    """The full contraction of two tensors of one type."""
    if not isinstance(a, TypedTensor) or type(a) is not type(b):
        raise TypeError("inner takes two typed tensors of the same type")
    p, q, sub = a._aligned(b)
    return Scalar((p * q).reshape(*p.shape[: p.ndim - len(a.BASE)], -1).sum(-1), sub)


def euler_rodrigues(r: MRP) -> R2:
    """The rotation matrix of an MRP."""
    t = _typed(r, MRP)
    rr = (t.data * t.data).sum(-1)[..., None, None]
    w = wr2_to_full(t.data)
    eye = torch.eye(3, dtype=DTYPE)
    m = ((1 + rr) ** 2 * eye + 4 * (1 - rr) * w + 8 * w @ w) / (1 + rr) ** 2
    return R2(m, t.sub_batch_ndim)


def sum(view: Any, dims: Any = 0, keepdim: bool = False) -> Any:
    """Sum over axes of a ``dynamic_batch`` / ``sub_batch`` view; anything else as the
    builtin ``sum``."""
    if not isinstance(view, Region):
        return builtins.sum(view) if dims == 0 else builtins.sum(view, dims)
    axes = [view.axis(d) for d in (dims if isinstance(dims, (list, tuple)) else [dims])]
    removed = 0 if keepdim else len(axes)
    return view.tensor._new(view.tensor.data.sum(axes, keepdim=keepdim), view.sub_after(-removed))


def mean(view: Region, dim: int = 0) -> Any:
    """Mean over one axis of a ``dynamic_batch`` / ``sub_batch`` view."""
    if not isinstance(view, Region):
        raise TypeError("mean takes x.dynamic_batch or x.sub_batch")
    return view.tensor._new(view.tensor.data.mean(view.axis(dim)), view.sub_after(-1))


_FREE_FUNCTIONS: dict[str, Callable[..., Any]] = {
    f.__name__: f
    for f in (
        abs, pow, tr, vol, dev, sym, skew, r2_from_sr2, r2_from_wr2, norm, unit, det, inv,
        outer, inner, euler_rodrigues, sum, mean, linspace, logspace, stack, cat,
    )
}  # fmt: skip
for _name, _fn in {
    "exp": torch.exp,
    "log": torch.log,
    "log10": torch.log10,
    "sqrt": torch.sqrt,
    "sin": torch.sin,
    "cos": torch.cos,
    "tan": torch.tan,
    "asin": torch.asin,
    "acos": torch.acos,
    "atan": torch.atan,
    "sinh": torch.sinh,
    "cosh": torch.cosh,
    "tanh": torch.tanh,
    "sign": torch.sign,
    "macaulay": torch.relu,
    "heaviside": lambda x: (torch.sign(x) + 1.0) / 2.0,
}.items():
    _FREE_FUNCTIONS[_name] = _elementwise(_name, _fn)
