"""NEML2's tensor types other than Scalar (Vec, MillerIndex, WR2, Quaternion, R2, SR2,
SSR4, MRP) with their constructors and class methods, and :data:`EXPR_TYPES`, every typed
tensor by NEML2's type name."""

from __future__ import annotations

from typing import Any

import torch

from ..tensors import SQRT2, full_to_wr2
from .typed import DTYPE, Scalar, TypedTensor, _as_data


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
