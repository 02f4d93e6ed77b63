"""The restricted Python of ``[Tensors]`` blocks of ``type = Python``.

An expression (or a block of statements that assigns ``result``) is parsed, its syntax
tree is checked against what tensor construction needs, and only then is it evaluated,
with empty builtins apart from a few harmless ones, in a namespace that holds:

* small typed tensors under NEML2's names (:class:`Scalar`, :class:`SR2`, :class:`Vec`,
  :class:`R2`, :class:`WR2`, :class:`SSR4`, :class:`MRP`, :class:`Quaternion`,
  :class:`MillerIndex`) with the constructors and class methods NEML2's input files use,
  their region views (``x.dynamic_batch``, ``x.sub_batch``, ...) and the free functions
  ``linspace``, ``logspace``, ``stack``, ``cat`` and a few elementwise and algebraic ones;
* ``torch`` and ``math`` as stand-ins that hold only a list of tensor-creation and math
  functions (no ``torch.load``, ``torch.save``, ``torch.ops``, ``torch.hub``, ...);
* the other ``[Tensors]`` blocks of the file, by bare name (supplied by the caller).

The check refuses imports, function and class definitions, lambdas, ``global``, names
and attributes that start with an underscore (``__class__``, ``__globals__``, ...),
attributes outside a list of tensor methods, and the names of builtins that reach outside
(``open``, ``eval``, ``exec``, ``getattr``, ``__import__``, ...). The values stay plain
Python and torch objects, so the list of attributes is what keeps an expression from
walking from a tensor to a module, a frame or a file.
"""

from __future__ import annotations

import ast
import builtins
import math
import sys
import textwrap
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

import torch

from .errors import Neml2Error
from .tensors import SQRT2, full_to_sr2, full_to_wr2, sr2_to_full, wr2_to_full

__all__ = [
    "EXPR_TYPES",
    "MRP",
    "R2",
    "SR2",
    "SSR4",
    "WR2",
    "ExprError",
    "ExprRefused",
    "MillerIndex",
    "Quaternion",
    "Region",
    "Scalar",
    "TypedTensor",
    "Vec",
    "base_namespace",
    "check_code",
    "dedent_code",
    "evaluate",
]

DTYPE = torch.float64


class ExprError(Exception):
    """An expression could not be evaluated; ``line`` is its line within the code (1-based)."""

    def __init__(self, message: str, line: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class ExprRefused(ExprError):
    """The expression reaches outside the tensor namespace; refused before evaluation."""


# ---------------------------------------------------------------------------------------
# typed tensors
# ---------------------------------------------------------------------------------------


def _as_data(value: Any) -> torch.Tensor:
    """A number, nested list or tensor as a float64 tensor."""
    if isinstance(value, TypedTensor):
        return value.data
    if isinstance(value, torch.Tensor):
        return value.to(DTYPE)
    if isinstance(value, (list, tuple)):
        value = [v.data if isinstance(v, TypedTensor) else v for v in value]
        if value and all(isinstance(v, torch.Tensor) for v in value):
            return torch.stack([v.to(DTYPE) for v in value])
    return torch.as_tensor(value, dtype=DTYPE)


class TypedTensor:
    """A float64 tensor tagged with a NEML2 type: ``data`` is ``(*batch, *BASE)``, the last
    ``sub_batch_ndim`` batch axes being sub-batch axes (NEML2's ``sub_batch_ndim``)."""

    TYPE: ClassVar[str] = ""
    BASE: ClassVar[tuple[int, ...]] = ()

    __slots__ = ("data", "sub_batch_ndim")
    data: torch.Tensor
    sub_batch_ndim: int

    def __init__(
        self,
        data: Any,
        sub_batch_ndim: int | None = None,
        *,
        dtype: Any = None,
        device: Any = None,
    ) -> None:
        del dtype, device  # accepted for NEML2's signatures; values are float64 on the CPU
        inherited: int = 0
        if isinstance(data, TypedTensor):
            if type(data) is not type(self):
                raise TypeError(f"cannot make a {self.TYPE} from a {data.TYPE}")
            inherited = data.sub_batch_ndim
        tensor = _as_data(data)
        base = self.BASE
        if tuple(tensor.shape[tensor.ndim - len(base) :]) != base or tensor.ndim < len(base):
            raise ValueError(
                f"a {self.TYPE} has base shape {base}, got a tensor of shape {tuple(tensor.shape)}"
            )
        sub = inherited if sub_batch_ndim is None else int(sub_batch_ndim)
        if not 0 <= sub <= tensor.ndim - len(base):
            raise ValueError(
                f"{self.TYPE}: sub_batch_ndim={sub} but the tensor has "
                f"{tensor.ndim - len(base)} batch axes"
            )
        self.data = tensor
        self.sub_batch_ndim = sub

    def __repr__(self) -> str:
        return f"{self.TYPE}(shape={tuple(self.data.shape)}, sub_batch_ndim={self.sub_batch_ndim})"

    # ---- shapes and region views ----

    @property
    def shape(self) -> torch.Size:
        """The shape of ``data``."""
        return self.data.shape

    @property
    def ndim(self) -> int:
        """The number of axes of ``data``."""
        return self.data.ndim

    @property
    def batch_ndim(self) -> int:
        """Dynamic and sub-batch axes together."""
        return self.data.ndim - len(self.BASE)

    @property
    def base_shape(self) -> torch.Size:
        """The type's base shape."""
        return torch.Size(self.BASE)

    @property
    def batch_shape(self) -> torch.Size:
        """The shape of the dynamic and sub-batch axes."""
        return self.data.shape[: self.batch_ndim]

    @property
    def dynamic_batch_shape(self) -> torch.Size:
        """The shape of the dynamic batch axes."""
        return self.data.shape[: self.batch_ndim - self.sub_batch_ndim]

    @property
    def sub_batch_shape(self) -> torch.Size:
        """The shape of the sub-batch axes."""
        return self.data.shape[self.batch_ndim - self.sub_batch_ndim : self.batch_ndim]

    @property
    def batch(self) -> Region:
        """All batch axes (dynamic and sub-batch)."""
        return Region(self, "batch")

    @property
    def dynamic_batch(self) -> Region:
        """The dynamic batch axes."""
        return Region(self, "dynamic_batch")

    @property
    def sub_batch(self) -> Region:
        """The sub-batch axes."""
        return Region(self, "sub_batch")

    @property
    def base(self) -> Region:
        """The base axes."""
        return Region(self, "base")

    def _new(self, data: torch.Tensor, sub_batch_ndim: int | None = None) -> Any:
        sub = self.sub_batch_ndim if sub_batch_ndim is None else sub_batch_ndim
        return type(self)(data, sub)

    # ---- factories ----

    @classmethod
    def zeros(cls, *batch: int, dtype: Any = None, device: Any = None) -> Any:
        """Zeros of dynamic batch shape ``batch``."""
        return cls(torch.zeros(*batch, *cls.BASE, dtype=DTYPE))

    @classmethod
    def ones(cls, *batch: int, dtype: Any = None, device: Any = None) -> Any:
        """Ones of dynamic batch shape ``batch``."""
        return cls(torch.ones(*batch, *cls.BASE, dtype=DTYPE))

    @classmethod
    def empty(cls, *batch: int, dtype: Any = None, device: Any = None) -> Any:
        """As :meth:`zeros` (an expression has no use for undefined values)."""
        return cls.zeros(*batch)

    @classmethod
    def full(cls, *batch: int, fill_value: float, dtype: Any = None, device: Any = None) -> Any:
        """``fill_value`` everywhere, of dynamic batch shape ``batch``."""
        return cls(torch.full((*batch, *cls.BASE), float(fill_value), dtype=DTYPE))

    @classmethod
    def fill(cls, *components: Any, dtype: Any = None, device: Any = None) -> Any:
        """One value from all of its components, in row-major order."""
        size = math.prod(cls.BASE)
        if len(components) != size:
            raise ValueError(f"{cls.TYPE}.fill takes {size} components, got {len(components)}")
        return cls(_as_data([float(c) for c in components]).reshape(cls.BASE))

    # ---- arithmetic ----

    def _aligned(self, other: TypedTensor) -> tuple[torch.Tensor, torch.Tensor, int]:
        """Both operands' data with as many sub-batch axes (new ones of size 1 in front)."""
        sub = max(self.sub_batch_ndim, other.sub_batch_ndim)

        def pad(t: TypedTensor) -> torch.Tensor:
            data = t.data
            at = t.batch_ndim - t.sub_batch_ndim
            for _ in range(sub - t.sub_batch_ndim):
                data = data.unsqueeze(at)
            return data

        a, b = pad(self), pad(other)
        if isinstance(other, Scalar) and not isinstance(self, Scalar):
            b = b.reshape(*b.shape, *(1,) * len(self.BASE))
        return a, b, sub

    def _binary(self, other: Any, op: Callable[[Any, Any], Any], literals: bool) -> Any:
        if isinstance(other, TypedTensor):
            if type(other) is type(self) or isinstance(other, Scalar):
                a, b, sub = self._aligned(other)
                return self._new(op(a, b), sub)
            if isinstance(self, Scalar):
                b, a, sub = other._aligned(self)
                return other._new(op(a, b), sub)
            return NotImplemented
        if literals and isinstance(other, (int, float)) and not isinstance(other, bool):
            return self._new(op(self.data, other))
        return NotImplemented

    def __add__(self, other: Any) -> Any:
        return self._binary(other, lambda a, b: a + b, isinstance(self, Scalar))

    def __radd__(self, other: Any) -> Any:
        return self._binary(other, lambda a, b: b + a, isinstance(self, Scalar))

    def __sub__(self, other: Any) -> Any:
        return self._binary(other, lambda a, b: a - b, isinstance(self, Scalar))

    def __rsub__(self, other: Any) -> Any:
        return self._binary(other, lambda a, b: b - a, isinstance(self, Scalar))

    def __mul__(self, other: Any) -> Any:
        return self._binary(other, lambda a, b: a * b, True)

    def __rmul__(self, other: Any) -> Any:
        return self._binary(other, lambda a, b: b * a, True)

    def __truediv__(self, other: Any) -> Any:
        return self._binary(other, lambda a, b: a / b, True)

    def __rtruediv__(self, other: Any) -> Any:
        return self._binary(other, lambda a, b: b / a, isinstance(self, Scalar))

    def __neg__(self) -> Any:
        return self._new(-self.data)

    def __pos__(self) -> Any:
        return self

    def __abs__(self) -> Any:
        return self._new(self.data.abs())

    def __pow__(self, n: Any) -> Any:
        if isinstance(n, Scalar):
            a, b, sub = self._aligned(n)
            return self._new(a**b, sub)
        return self._new(self.data ** float(n))


class Scalar(TypedTensor):
    """NEML2's Scalar: base shape ``()``."""

    TYPE = "Scalar"
    BASE = ()
    __slots__ = ()

    @classmethod
    def arange(cls, start: float, end: float | None = None, step: float = 1, **_: Any) -> Scalar:
        """As ``torch.arange``."""
        if end is None:
            return cls(torch.arange(start, dtype=DTYPE))
        return cls(torch.arange(start, end, step, dtype=DTYPE))


class Vec(TypedTensor):
    """NEML2's Vec: a Cartesian 3-vector."""

    TYPE = "Vec"
    BASE = (3,)
    __slots__ = ()


class MillerIndex(TypedTensor):
    """NEML2's MillerIndex: crystal directions or planes ``(h, k, l)``, stored as floats."""

    TYPE = "MillerIndex"
    BASE = (3,)
    __slots__ = ()


class WR2(TypedTensor):
    """NEML2's WR2: the axial vector of a skew tensor."""

    TYPE = "WR2"
    BASE = (3,)
    __slots__ = ()

    @classmethod
    def identity(cls, **_: Any) -> WR2:
        """The zero skew tensor."""
        return cls(torch.zeros(3, dtype=DTYPE))


class Quaternion(TypedTensor):
    """NEML2's Quaternion ``[s, x, y, z]``."""

    TYPE = "Quaternion"
    BASE = (4,)
    __slots__ = ()

    @classmethod
    def identity(cls, **_: Any) -> Quaternion:
        """The identity rotation ``(1, 0, 0, 0)``."""
        return cls([1.0, 0.0, 0.0, 0.0])


class R2(TypedTensor):
    """NEML2's R2: a full 3x3 tensor."""

    TYPE = "R2"
    BASE = (3, 3)
    __slots__ = ()

    @classmethod
    def identity(cls, **_: Any) -> R2:
        """The 3x3 identity."""
        return cls(torch.eye(3, dtype=DTYPE))

    def __matmul__(self, other: Any) -> Any:
        if not isinstance(other, R2):
            return NotImplemented
        a, b, sub = self._aligned(other)
        return R2(a @ b, sub)


class SR2(TypedTensor):
    """NEML2's SR2: a symmetric 3x3 tensor in Mandel storage."""

    TYPE = "SR2"
    BASE = (6,)
    __slots__ = ()

    @classmethod
    def identity(cls, **_: Any) -> SR2:
        """The identity, ``[1, 1, 1, 0, 0, 0]``."""
        return cls([1.0, 1.0, 1.0, 0.0, 0.0, 0.0])

    @classmethod
    def fill(cls, *components: Any, dtype: Any = None, device: Any = None) -> SR2:
        """One value ``a`` (``a I``), three diagonal values, or the six components
        ``xx yy zz yz xz xy`` of the tensor (shear components get Mandel's sqrt(2))."""
        v = [float(c) for c in components]
        if len(v) == 1:
            v = [v[0], v[0], v[0], 0.0, 0.0, 0.0]
        elif len(v) == 3:
            v = [*v, 0.0, 0.0, 0.0]
        elif len(v) == 6:
            v = [v[0], v[1], v[2], SQRT2 * v[3], SQRT2 * v[4], SQRT2 * v[5]]
        else:
            raise ValueError(f"SR2.fill takes 1, 3 or 6 components, got {len(v)}")
        return cls(v)


class SSR4(TypedTensor):
    """NEML2's SSR4: a fourth-order tensor with minor symmetries, 6x6 in Mandel storage."""

    TYPE = "SSR4"
    BASE = (6, 6)
    __slots__ = ()

    @staticmethod
    def _i() -> torch.Tensor:
        return torch.tensor([1.0, 1.0, 1.0, 0.0, 0.0, 0.0], dtype=DTYPE)

    @classmethod
    def identity(cls, **_: Any) -> SSR4:
        """``I x I``: maps ``A`` to ``tr(A) I``."""
        i = cls._i()
        return cls(torch.outer(i, i))

    @classmethod
    def identity_sym(cls, **_: Any) -> SSR4:
        """The symmetric identity (the 6x6 identity matrix)."""
        return cls(torch.eye(6, dtype=DTYPE))

    @classmethod
    def identity_vol(cls, **_: Any) -> SSR4:
        """The volumetric projector ``I x I / 3``."""
        i = cls._i()
        return cls(torch.outer(i, i) / 3.0)

    @classmethod
    def identity_dev(cls, **_: Any) -> SSR4:
        """The deviatoric projector ``I_sym - I_vol``."""
        return cls(cls.identity_sym().data - cls.identity_vol().data)

    @classmethod
    def identity_C1(cls, **_: Any) -> SSR4:
        """Ones on the first three diagonal entries."""
        return cls(torch.diag(cls._i()))

    @classmethod
    def identity_C2(cls, **_: Any) -> SSR4:
        """Ones off the diagonal of the upper-left 3x3 block."""
        block = torch.zeros(6, 6, dtype=DTYPE)
        block[:3, :3] = 1.0 - torch.eye(3, dtype=DTYPE)
        return cls(block)

    @classmethod
    def identity_C3(cls, **_: Any) -> SSR4:
        """Ones on the last three diagonal entries."""
        return cls(torch.diag(1.0 - cls._i()))

    def __matmul__(self, other: Any) -> Any:
        if isinstance(other, SR2):
            a, b, sub = self._aligned(other)
            return SR2((a @ b.unsqueeze(-1)).squeeze(-1), sub)
        if isinstance(other, SSR4):
            a, b, sub = self._aligned(other)
            return SSR4(a @ b, sub)
        return NotImplemented


class MRP(TypedTensor):
    """NEML2's MRP (``Rot``): modified Rodrigues parameters ``n tan(theta / 4)``."""

    TYPE = "MRP"
    BASE = (3,)
    __slots__ = ()

    @classmethod
    def identity(cls, **_: Any) -> MRP:
        """The zero rotation."""
        return cls(torch.zeros(3, dtype=DTYPE))

    @classmethod
    def from_axis_angle(cls, n: Vec, theta: Scalar) -> MRP:
        """The rotation by ``theta`` about the axis ``n`` (any length)."""
        axis = n.data / torch.linalg.vector_norm(n.data, dim=-1, keepdim=True)
        return cls(axis * torch.tan(_as_data(theta) / 4.0).unsqueeze(-1), n.sub_batch_ndim)

    @classmethod
    def from_axis_angle_standard(cls, n: Vec, theta: Scalar) -> MRP:
        """As :meth:`from_axis_angle`, through the standard Rodrigues vector."""
        axis = n.data / torch.linalg.vector_norm(n.data, dim=-1, keepdim=True)
        rodrigues = axis * torch.tan(_as_data(theta) / 2.0).unsqueeze(-1)
        return cls(_rodrigues_to_mrp(rodrigues), n.sub_batch_ndim)

    @classmethod
    def from_matrix(cls, m: R2) -> MRP:
        """The MRP of a proper rotation matrix (angles in ``[0, pi)``)."""
        d = m.data
        angle = torch.acos(torch.clamp((d.diagonal(dim1=-2, dim2=-1).sum(-1) - 1.0) / 2.0, -1, 1))
        scale = torch.tan(angle / 2.0) / (2.0 * torch.sin(angle))
        scale = torch.where(angle == 0, torch.zeros_like(scale), scale)
        rodrigues = 2.0 * full_to_wr2(d) * scale.unsqueeze(-1)
        return cls(_rodrigues_to_mrp(rodrigues), m.sub_batch_ndim)

    @classmethod
    def rotation_from_to(cls, v1: Vec, v2: Vec) -> MRP:
        """The shortest rotation taking the direction ``v1`` to ``v2`` (unit vectors)."""
        a, b = v1.data, v2.data
        rodrigues = torch.linalg.cross(a, b, dim=-1) / (1.0 + (a * b).sum(-1, keepdim=True))
        return cls(_rodrigues_to_mrp(rodrigues), v1.sub_batch_ndim)


def _rodrigues_to_mrp(r: torch.Tensor) -> torch.Tensor:
    return r / (torch.sqrt(1.0 + (r * r).sum(-1, keepdim=True)) + 1.0)


#: The typed tensors by NEML2's type name (``Rot`` is MRP's older name).
EXPR_TYPES: dict[str, type[TypedTensor]] = {
    cls.TYPE: cls for cls in (Scalar, Vec, R2, SR2, WR2, SSR4, MRP, Quaternion, MillerIndex)
}
EXPR_TYPES["Rot"] = MRP


# ---------------------------------------------------------------------------------------
# region views
# ---------------------------------------------------------------------------------------


class Region:
    """A region of a typed tensor's axes: ``batch``, ``dynamic_batch``, ``sub_batch`` or
    ``base``; names where :func:`linspace`, :func:`stack`, ... put or take an axis."""

    __slots__ = ("kind", "tensor")

    def __init__(self, tensor: TypedTensor, kind: str) -> None:
        self.tensor = tensor
        self.kind = kind

    def bounds(self) -> tuple[int, int]:
        """The first axis of the region and its number of axes."""
        t = self.tensor
        nb, ns = t.batch_ndim, t.sub_batch_ndim
        return {
            "batch": (0, nb),
            "dynamic_batch": (0, nb - ns),
            "sub_batch": (nb - ns, ns),
            "base": (nb, len(t.BASE)),
        }[self.kind]

    @property
    def shape(self) -> torch.Size:
        """The sizes of the region's axes."""
        start, n = self.bounds()
        return self.tensor.data.shape[start : start + n]

    @property
    def ndim(self) -> int:
        """The number of the region's axes."""
        return self.bounds()[1]

    def axis(self, dim: int) -> int:
        """The tensor axis of the region's axis ``dim``."""
        start, n = self.bounds()
        d = dim + n if dim < 0 else dim
        if not 0 <= d < n:
            raise IndexError(f"{self.kind} axis {dim} out of range for {n} axes")
        return start + d

    def insert_axis(self, dim: int) -> int:
        """The tensor axis where a new axis at the region's position ``dim`` goes."""
        start, n = self.bounds()
        d = dim + n + 1 if dim < 0 else dim
        if not 0 <= d <= n:
            raise IndexError(f"{self.kind} insert position {dim} out of range for {n} axes")
        return start + d

    def sub_after(self, added: int) -> int:
        """The sub-batch count after adding (or removing) ``added`` axes in this region."""
        t = self.tensor
        return t.sub_batch_ndim + added if self.kind == "sub_batch" else t.sub_batch_ndim

    def _mutable(self, what: str) -> None:
        if self.kind in ("batch", "base"):
            raise TypeError(f"{self.kind}.{what} is not available: use dynamic_batch or sub_batch")

    def unsqueeze(self, dim: int = -1, n: int = 1) -> Any:
        """``n`` new axes of size 1 at position ``dim`` of the region."""
        self._mutable("unsqueeze")
        at, data = self.insert_axis(dim), self.tensor.data
        for _ in range(n):
            data = data.unsqueeze(at)
        return self.tensor._new(data, self.sub_after(n))

    def squeeze(self, dim: int = -1) -> Any:
        """Drop the region's axis ``dim`` of size 1."""
        self._mutable("squeeze")
        at = self.axis(dim)
        if self.tensor.data.shape[at] != 1:
            raise ValueError(f"{self.kind}.squeeze: axis {dim} has size {self.tensor.shape[at]}")
        return self.tensor._new(self.tensor.data.squeeze(at), self.sub_after(-1))

    def expand(self, *shape: int) -> Any:
        """Broadcast the region to ``shape`` (new axes in front)."""
        self._mutable("expand")
        start, n = self.bounds()
        if len(shape) < n:
            raise ValueError(f"{self.kind}.expand: {shape} has fewer axes than {tuple(self.shape)}")
        data = self.tensor.data
        for _ in range(len(shape) - n):
            data = data.unsqueeze(start)
        full = (*data.shape[:start], *shape, *data.shape[start + len(shape) :])
        return self.tensor._new(data.expand(full).contiguous(), self.sub_after(len(shape) - n))

    def expand_at(self, size: int, dim: int = 0) -> Any:
        """A new sub-batch axis of ``size`` at position ``dim``."""
        if self.kind != "sub_batch":
            raise TypeError("expand_at is a sub_batch method")
        at, data = self.insert_axis(dim), self.tensor.data
        new = data.unsqueeze(at)
        new = new.expand(*data.shape[:at], size, *data.shape[at:]).contiguous()
        return self.tensor._new(new, self.sub_after(1))

    def retag(self, ndim: int) -> Any:
        """The same values with the last ``ndim`` batch axes as sub-batch axes."""
        if self.kind != "sub_batch":
            raise TypeError("retag is a sub_batch method")
        return self.tensor._new(self.tensor.data, int(ndim))

    def flatten(self) -> Any:
        """``retag(0)``: every batch axis dynamic."""
        return self.retag(0)

    def diagonalize(self) -> Any:
        """A Scalar's last sub-batch axis as the diagonal of a new square pair of them."""
        t = self.tensor
        if self.kind != "sub_batch" or not isinstance(t, Scalar) or t.sub_batch_ndim == 0:
            raise TypeError("diagonalize takes the sub_batch of a Scalar with sub-batch axes")
        return t._new(torch.diag_embed(t.data), t.sub_batch_ndim + 1)

    def transpose(self, dim0: int = -2, dim1: int = -1) -> Any:
        """Swap two base axes (R2, SSR4)."""
        if self.kind != "base" or len(self.tensor.BASE) < 2:
            raise TypeError("transpose takes the base of an R2 or SSR4")
        return self.tensor._new(self.tensor.data.transpose(self.axis(dim0), self.axis(dim1)))

    def __getitem__(self, key: Any) -> Any:
        start, n = self.bounds()
        keys = key if isinstance(key, tuple) else (key,)
        if Ellipsis in keys:
            i = keys.index(Ellipsis)
            fill = n - sum(1 for k in keys if k is not Ellipsis and k is not None)
            keys = keys[:i] + (slice(None),) * fill + keys[i + 1 :]
        t = self.tensor
        full = (slice(None),) * start + keys + (slice(None),) * (t.ndim - start - n)
        added = sum(1 for k in keys if k is None) - sum(1 for k in keys if isinstance(k, int))
        return t._new(t.data[full], self.sub_after(added))


# ---------------------------------------------------------------------------------------
# free functions
# ---------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------
# torch and math stand-ins
# ---------------------------------------------------------------------------------------


def _words(text: str) -> tuple[str, ...]:
    """The whitespace-separated words of ``text``."""
    return tuple(text.split())


class _Module:
    """A read-only stand-in for a module that holds only the listed members."""

    __slots__ = ("_label", "_members")

    def __init__(self, label: str, members: Mapping[str, Any]) -> None:
        object.__setattr__(self, "_label", label)
        object.__setattr__(self, "_members", dict(members))

    def __getattr__(self, name: str) -> Any:
        members = object.__getattribute__(self, "_members")
        if name in members:
            return members[name]
        label = object.__getattribute__(self, "_label")
        raise AttributeError(
            f"{label}.{name} is not available in tensor expressions; "
            f"{label} has: {', '.join(sorted(members))}"
        )

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("the namespace is read-only")

    def __dir__(self) -> list[str]:
        return sorted(object.__getattribute__(self, "_members"))


#: torch's tensor-creation, math and shape functions an expression may call.
TORCH_FUNCTIONS = _words(
    """
    tensor as_tensor zeros ones full eye empty arange linspace logspace zeros_like
    ones_like full_like diag diag_embed diagonal stack cat hstack vstack meshgrid
    cartesian_prod reshape flatten squeeze unsqueeze transpose permute movedim flip roll
    repeat_interleave tile broadcast_to expand_copy exp expm1 log log1p log2 log10 sqrt
    rsqrt square pow sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh
    abs sign sgn floor ceil round trunc frac clamp clip maximum minimum max min sum prod
    mean std var cumsum cumprod diff where relu sigmoid heaviside erf erfc matmul mm bmm
    mv outer einsum dot inner tensordot kron cross trace tril triu isclose allclose
    isfinite isnan deg2rad rad2deg hypot lerp
    """
)
#: torch's non-function members an expression may name.
TORCH_CONSTANTS = ("pi", "e", "inf", "nan", "float64", "float32", "double", "float", "int64")
#: the tensor methods and attributes an expression may use (beside the typed tensors' own).
TENSOR_ATTRIBUTES = frozenset(
    _words(
        """
        shape ndim dim size numel T mT item tolist reshape view flatten squeeze unsqueeze
        transpose permute expand expand_as repeat clone contiguous double float to sum prod
        mean std var min max cumsum cumprod abs sqrt exp log log10 pow sin cos tan sinh cosh
        tanh sign clamp clip diagonal diag t flip roll matmul dot outer cross norm neg
        reciprocal square round floor ceil unbind split chunk narrow select index_select
        real imag dtype
        """
    )
)
#: math's members an expression may use.
MATH_MEMBERS = _words(
    """
    pi e tau inf nan sqrt exp expm1 log log1p log2 log10 pow sin cos tan asin acos atan
    atan2 sinh cosh tanh asinh acosh atanh hypot degrees radians floor ceil trunc fabs
    factorial comb perm gcd lcm isclose isfinite isnan prod fsum copysign erf erfc gamma
    lgamma
    """
)

TORCH = _Module(
    "torch",
    {n: getattr(torch, n) for n in (*TORCH_FUNCTIONS, *TORCH_CONSTANTS) if hasattr(torch, n)},
)
MATH = _Module("math", {n: getattr(math, n) for n in MATH_MEMBERS if hasattr(math, n)})

#: The builtins an expression may call.
SAFE_BUILTINS: dict[str, Any] = {
    n: getattr(builtins, n)
    for n in _words("abs min max range len float int list tuple sum zip enumerate round")
} | {"True": True, "False": False, "None": None}


def _torch_internal_import(name: str, *args: Any, **kwargs: Any) -> Any:
    """The ``__import__`` of an expression's frame, for torch's own use only.

    torch's C functions (``torch.tensor``, ``torch.linspace``, ...) import modules of
    their own through the builtins of the calling frame; an expression itself can never
    name ``__import__`` (a dunder name, refused before evaluation), and this one imports
    nothing but modules that are already loaded.
    """
    if name not in sys.modules:
        raise ImportError(f"expressions import nothing ('{name}')")
    return builtins.__import__(name, *args, **kwargs)


#: Builtins and names that reach outside: refused wherever they appear.
FORBIDDEN_NAMES = frozenset(
    _words(
        """
        open eval exec compile getattr setattr delattr hasattr globals locals vars dir
        __import__ __builtins__ breakpoint input help type object super memoryview
        classmethod staticmethod property exit quit print id hash iter next callable
        isinstance issubclass format repr ascii chr ord bytes bytearray
        """
    )
)


def _typed_attributes() -> frozenset[str]:
    names: set[str] = set()
    for cls in (*EXPR_TYPES.values(), Region):
        names.update(n for n in dir(cls) if not n.startswith("_"))
    return frozenset(names - {"tensor", "kind"})


#: Every attribute name an expression may use.
ALLOWED_ATTRIBUTES = (
    TENSOR_ATTRIBUTES
    | _typed_attributes()
    | frozenset(TORCH_FUNCTIONS)
    | frozenset(TORCH_CONSTANTS)
    | frozenset(MATH_MEMBERS)
)


def base_namespace() -> dict[str, Any]:
    """The names every expression sees (before the file's own [Tensors] blocks)."""
    names: dict[str, Any] = {"torch": TORCH, "math": MATH}
    names.update({n: cls for n, cls in EXPR_TYPES.items()})
    names.update(_FREE_FUNCTIONS)
    return names


# ---------------------------------------------------------------------------------------
# checking and evaluating
# ---------------------------------------------------------------------------------------

_REFUSED_NODES: dict[type[ast.AST], str] = {
    ast.Import: "an import",
    ast.ImportFrom: "an import",
    ast.Lambda: "a lambda",
    ast.FunctionDef: "a function definition",
    ast.AsyncFunctionDef: "a function definition",
    ast.ClassDef: "a class definition",
    ast.Global: "a global statement",
    ast.Nonlocal: "a nonlocal statement",
    ast.With: "a with statement",
    ast.AsyncWith: "a with statement",
    ast.AsyncFor: "an async loop",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
    ast.Raise: "raise",
    ast.Try: "try",
    ast.Delete: "del",
    ast.JoinedStr: "an f-string",
}


def dedent_code(code: str) -> str:
    """The code of an ``expr`` option without the indentation the input file gave it; the
    line count is kept, so line ``n`` of the result is line ``n`` of the option."""
    lines = code.split("\n")
    first, rest = lines[0].strip(), "\n".join(lines[1:])
    return "\n".join([first, textwrap.dedent(rest)]) if len(lines) > 1 else first


def _bound_names(tree: ast.AST) -> set[str]:
    """Names the code itself assigns (statements, comprehension and loop targets)."""
    return {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del))
    }


def check_code(tree: ast.AST, known: Iterable[str]) -> None:
    """Refuse code that reaches outside the tensor namespace or names an unknown name;
    ``known`` are the names the namespace will hold."""
    known_set = set(known) | set(SAFE_BUILTINS) | _bound_names(tree)
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 1)
        kind = _REFUSED_NODES.get(type(node))
        if kind is not None:
            raise ExprRefused(f"expression reaches outside the tensor namespace: {kind}", line)
        if isinstance(node, ast.Attribute):
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                raise ExprRefused(
                    "expression reaches outside the tensor namespace: assignment to "
                    f"attribute '{node.attr}'",
                    line,
                )
            if node.attr.startswith("_"):
                raise ExprRefused(
                    f"expression reaches outside the tensor namespace: attribute '{node.attr}'",
                    line,
                )
            if node.attr not in ALLOWED_ATTRIBUTES:
                raise ExprRefused(
                    "expression reaches outside the tensor namespace: attribute "
                    f"'{node.attr}' is not one of the tensor methods expressions may use",
                    line,
                )
        elif isinstance(node, ast.Name):
            if node.id.startswith("_") or node.id in FORBIDDEN_NAMES:
                raise ExprRefused(
                    f"expression reaches outside the tensor namespace: '{node.id}'", line
                )
            if isinstance(node.ctx, ast.Load) and node.id not in known_set:
                names = ", ".join(sorted(set(known) | set(SAFE_BUILTINS) - {"True", "False"}))
                raise ExprError(f"unknown name '{node.id}'; known names: {names}", line)


def evaluate(code: str, namespace: dict[str, Any], lazy_names: Iterable[str] = ()) -> Any:
    """Evaluate the (dedented) code of an ``expr`` option: a single expression, or
    statements that assign ``result``. ``namespace`` maps the names it may use;
    ``lazy_names`` are more names that its ``__missing__`` supplies when asked (the
    file's other [Tensors] blocks).

    Raises :class:`ExprRefused` or :class:`ExprError` with the line within the code.
    """
    try:
        tree: ast.AST = ast.parse(code, mode="eval")
        mode = "eval"
    except SyntaxError:
        try:
            tree = ast.parse(code, mode="exec")
        except SyntaxError as err:
            raise ExprError(f"invalid Python: {err.msg}", err.lineno or 1) from None
        mode = "exec"
    check_code(tree, {*namespace, *lazy_names})
    if mode == "exec" and "result" not in _bound_names(tree):
        raise ExprError("a block of statements must assign its value to 'result'")
    scope = namespace
    scope["__builtins__"] = {**SAFE_BUILTINS, "__import__": _torch_internal_import}
    compiled = compile(tree, "<expr>", mode)  # type: ignore[call-overload]
    try:
        if mode == "eval":
            return eval(compiled, scope)
        exec(compiled, scope)
    except (ExprError, Neml2Error):
        raise
    except RecursionError:
        raise ExprError("expression recursed too deeply") from None
    except Exception as err:
        raise ExprError(f"{type(err).__name__}: {err}", _traceback_line(err)) from None
    if "result" not in scope:
        raise ExprError("a block of statements must assign its value to 'result'")
    return scope["result"]


def _traceback_line(err: BaseException) -> int:
    """The line of the expression where ``err`` was raised (1 when unknown)."""
    tb, line = err.__traceback__, 1
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<expr>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
