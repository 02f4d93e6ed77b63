"""NEML2's tensor types: the base shape of each, its storage convention, and the
operations the models share.

Every value is a plain ``torch.Tensor`` whose trailing dimensions are the type's base
shape; leading dimensions are the batch (one material point each) and any sub-batch
axes. The storage conventions are NEML2's:

=============  ==========  ========================================================
type           base shape  storage
=============  ==========  ========================================================
Scalar         ``()``      the number
Vec            ``(3,)``    Cartesian components
R2             ``(3, 3)``  a full second-order tensor, row-major
SR2            ``(6,)``    Mandel: ``[xx, yy, zz, sqrt2 yz, sqrt2 xz, sqrt2 xy]``
WR2            ``(3,)``    the axial vector ``w`` of a skew tensor ``W``:
                           ``W = [[0, -w2, w1], [w2, 0, -w0], [-w1, w0, 0]]``
SSR4           ``(6, 6)``  a fourth-order tensor with both minor symmetries, Mandel
MRP (Rot)      ``(3,)``    modified Rodrigues parameters ``n tan(theta / 4)``
Quaternion     ``(4,)``    ``[s, x, y, z]``
MillerIndex    ``(3,)``    integer crystal directions, stored as floats
=============  ==========  ========================================================
"""

from __future__ import annotations

import math

import torch

#: Every tensor type's base shape, by NEML2's name (``Rot`` is MRP's older name).
TYPES: dict[str, tuple[int, ...]] = {
    "Scalar": (),
    "Vec": (3,),
    "R2": (3, 3),
    "SR2": (6,),
    "WR2": (3,),
    "SSR4": (6, 6),
    "MRP": (3,),
    "Rot": (3,),
    "Quaternion": (4,),
    "MillerIndex": (3,),
}

SQRT2 = math.sqrt(2.0)

#: The (row, column) of each Mandel component of an SR2.
MANDEL_INDEX = ((0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1))
#: The Mandel factor of each component: 1 on the diagonal, sqrt(2) off it.
MANDEL_FACTOR = (1.0, 1.0, 1.0, SQRT2, SQRT2, SQRT2)


def base_shape(type_name: str) -> tuple[int, ...]:
    """The base shape of a NEML2 tensor type; KeyError names the known types."""
    try:
        return TYPES[type_name]
    except KeyError:
        raise KeyError(
            f"unknown tensor type '{type_name}'; known types: {', '.join(TYPES)}"
        ) from None


def sr2_to_full(s: torch.Tensor) -> torch.Tensor:
    """A Mandel 6-vector ``(..., 6)`` as the symmetric ``(..., 3, 3)`` matrix."""
    d = s / s.new_tensor(MANDEL_FACTOR)
    rows = [
        torch.stack([d[..., 0], d[..., 5], d[..., 4]], -1),
        torch.stack([d[..., 5], d[..., 1], d[..., 3]], -1),
        torch.stack([d[..., 4], d[..., 3], d[..., 2]], -1),
    ]
    return torch.stack(rows, -2)


def full_to_sr2(m: torch.Tensor) -> torch.Tensor:
    """The Mandel 6-vector of the symmetric part of a ``(..., 3, 3)`` matrix."""
    half = 0.5 * SQRT2
    return torch.stack(
        [
            m[..., 0, 0],
            m[..., 1, 1],
            m[..., 2, 2],
            half * (m[..., 1, 2] + m[..., 2, 1]),
            half * (m[..., 0, 2] + m[..., 2, 0]),
            half * (m[..., 0, 1] + m[..., 1, 0]),
        ],
        -1,
    )


def wr2_to_full(w: torch.Tensor) -> torch.Tensor:
    """The skew ``(..., 3, 3)`` matrix of an axial vector ``(..., 3)``."""
    zero = torch.zeros_like(w[..., 0])
    rows = [
        torch.stack([zero, -w[..., 2], w[..., 1]], -1),
        torch.stack([w[..., 2], zero, -w[..., 0]], -1),
        torch.stack([-w[..., 1], w[..., 0], zero], -1),
    ]
    return torch.stack(rows, -2)


def full_to_wr2(m: torch.Tensor) -> torch.Tensor:
    """The axial vector of the skew part of a ``(..., 3, 3)`` matrix."""
    return 0.5 * torch.stack(
        [m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1]],
        -1,
    )
