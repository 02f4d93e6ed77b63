"""The typed tensor base class of tensor expressions, :class:`Scalar`, and the region
views (``x.batch``, ``x.dynamic_batch``, ``x.sub_batch``, ``x.base``) of a typed tensor.

:class:`Scalar` lives beside the base class because every typed tensor's arithmetic
broadcasts a Scalar against it, and the region views because every typed tensor hands them
out (and a view's ``diagonalize`` takes a Scalar).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar

import torch

DTYPE = torch.float64


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
