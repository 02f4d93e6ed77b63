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

The operations (every one indexes with ``x[..., i]``, so any leading axes work, and
builds constants from factory ops, so it traces into exported graphs):

* storage conversions: :func:`sr2_to_full`, :func:`full_to_sr2` (the symmetric part),
  :func:`wr2_to_full`, :func:`full_to_wr2` (the skew part);
* derivative blocks: :func:`identity_block`, :func:`linear_block` (the constant block of
  any linear map), :func:`per_point`;
* second-order tensors: :func:`r2_det`, :func:`r2_cofactor` (d det / d A),
  :func:`r2_inverse`, :func:`sr2_det`, :func:`sr2_det_derivative`;
* vectors: :func:`cross`, :func:`dot`, :func:`outer`;
* rotations, with their derivatives: :func:`mrp_to_matrix`, :func:`mrp_compose`,
  :func:`wr2_exp_map` (NEML2's exponential map of a spin, see its note).
"""

from __future__ import annotations

import math
from collections.abc import Callable

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
    xx, yy, zz = s[..., 0], s[..., 1], s[..., 2]
    yz, xz, xy = s[..., 3] / SQRT2, s[..., 4] / SQRT2, s[..., 5] / SQRT2
    rows = [
        torch.stack([xx, xy, xz], -1),
        torch.stack([xy, yy, yz], -1),
        torch.stack([xz, yz, zz], -1),
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


# --- derivative blocks ---------------------------------------------------------------
#
# A derivative block d(of)/d(wrt) of one point has the shape ``(*of_base, *wrt_base)``.
# The helpers below build blocks from factory ops (``torch.eye``, ``torch.zeros``) and the
# operand's own values, never from ``torch.tensor`` constants, so that they trace into
# exported graphs.


def identity_block(shape: tuple[int, ...], like: torch.Tensor) -> torch.Tensor:
    """d v / d v of one point for a value of base shape ``shape``: ``(*shape, *shape)``
    (a 0-d one for a Scalar), with the dtype and device of ``like``."""
    size = math.prod(shape)
    eye = torch.eye(size, dtype=like.dtype).to(like.device)
    return eye.reshape(shape + shape)


def linear_block(
    fn: Callable[[torch.Tensor], torch.Tensor], shape: tuple[int, ...], like: torch.Tensor
) -> torch.Tensor:
    """The constant derivative block ``(*out_base, *shape)`` of a linear map ``fn``.

    ``fn`` maps ``(..., *shape)`` to ``(..., *out_base)`` (indexing its argument with
    ``x[..., i]``, as every function of this module does); it is applied once to the
    basis of its input space, so conversions between storages need no hand-written table.
    """
    size = math.prod(shape)
    basis = torch.eye(size, dtype=like.dtype).to(like.device).reshape((size, *shape))
    images = fn(basis)  # (size, *out_base): column j is fn(e_j)
    out_base = tuple(images.shape[1:])
    return images.reshape(size, -1).transpose(0, 1).reshape(out_base + shape)


def per_point(block: torch.Tensor, n: int) -> torch.Tensor:
    """A point-independent block repeated for ``n`` points, ``(n, *block)``."""
    return block.unsqueeze(0).expand((n, *block.shape)).clone()


# --- second-order tensors: determinant, cofactor, inverse -----------------------------


def r2_det(m: torch.Tensor) -> torch.Tensor:
    """The determinant of ``(..., 3, 3)`` matrices, ``(...)``."""
    return (
        m[..., 0, 0] * (m[..., 1, 1] * m[..., 2, 2] - m[..., 1, 2] * m[..., 2, 1])
        - m[..., 0, 1] * (m[..., 1, 0] * m[..., 2, 2] - m[..., 1, 2] * m[..., 2, 0])
        + m[..., 0, 2] * (m[..., 1, 0] * m[..., 2, 1] - m[..., 1, 1] * m[..., 2, 0])
    )


def r2_cofactor(m: torch.Tensor) -> torch.Tensor:
    """The cofactor matrix ``det(m) m^-T`` of ``(..., 3, 3)`` matrices, which is also
    d det(m) / d m; computed from 2x2 minors, so it exists for a singular ``m`` too."""

    def minor(i: int, j: int) -> torch.Tensor:
        r0, r1 = (k for k in range(3) if k != i)
        c0, c1 = (k for k in range(3) if k != j)
        return m[..., r0, c0] * m[..., r1, c1] - m[..., r0, c1] * m[..., r1, c0]

    rows = [torch.stack([(-1.0) ** (i + j) * minor(i, j) for j in range(3)], -1) for i in range(3)]
    return torch.stack(rows, -2)


def r2_inverse(m: torch.Tensor) -> torch.Tensor:
    """The inverse of ``(..., 3, 3)`` matrices: the transposed cofactor over the determinant."""
    return r2_cofactor(m).transpose(-1, -2) / r2_det(m)[..., None, None]


def sr2_det(s: torch.Tensor) -> torch.Tensor:
    """The determinant of Mandel 6-vectors ``(..., 6)``, ``(...)``."""
    return r2_det(sr2_to_full(s))


def sr2_det_derivative(s: torch.Tensor) -> torch.Tensor:
    """d det / d s of Mandel 6-vectors, ``(..., 6)``: the cofactor (symmetric for a
    symmetric tensor) in Mandel storage, since the Mandel dot product is the double
    contraction."""
    return full_to_sr2(r2_cofactor(sr2_to_full(s)))


# --- vectors --------------------------------------------------------------------------


def cross(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The cross product ``a x b`` of ``(..., 3)`` vectors."""
    return torch.stack(
        [
            a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
            a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
            a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0],
        ],
        -1,
    )


def dot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The dot product of ``(..., n)`` vectors, ``(...)``."""
    return (a * b).sum(-1)


def outer(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The outer product ``a b^T`` of ``(..., n)`` and ``(..., m)`` vectors, ``(..., n, m)``."""
    return a.unsqueeze(-1) * b.unsqueeze(-2)


# --- rotations: MRP and the exponential map of a WR2 -----------------------------------


def mrp_to_matrix(r: torch.Tensor) -> torch.Tensor:
    """The rotation matrix ``(..., 3, 3)`` of MRPs ``(..., 3)`` (NEML2's Euler-Rodrigues
    form): ``R = I + (4 (1 - r.r) W + 8 W W) / (1 + r.r)^2`` with ``W`` the skew matrix of
    ``r`` and ``W W = r r^T - (r.r) I``."""
    rr = dot(r, r)[..., None, None]
    W = wr2_to_full(r)
    WW = outer(r, r) - rr * identity_block((3,), r)
    return identity_block((3,), r) + (4 * (1 - rr) * W + 8 * WW) / (1 + rr) ** 2


def mrp_to_matrix_derivative(r: torch.Tensor) -> torch.Tensor:
    """d R / d r of :func:`mrp_to_matrix`, ``(..., 3, 3, 3)`` (the last axis is ``r``'s)."""
    eye = identity_block((3,), r)
    rr = dot(r, r)[..., None, None, None]
    c = 1 / (1 + rr) ** 2
    dc = -4 / (1 + rr) ** 3 * r[..., None, None, :]  # d c / d r_k
    W = wr2_to_full(r).unsqueeze(-1)
    WW = (outer(r, r) - dot(r, r)[..., None, None] * eye).unsqueeze(-1)
    # d W / d r_k is the skew matrix of e_k; d (W W) / d r_k = e_k r^T + r e_k^T - 2 r_k I
    dW = wr2_to_full(eye).permute(1, 2, 0)
    dWW = (
        eye[:, None, :] * r[..., None, :, None]
        + r[..., :, None, None] * eye[None, :, :]
        - 2 * eye[:, :, None] * r[..., None, None, :]
    )
    g = 4 * (1 - rr) * c
    dg = -8 * r[..., None, None, :] * c + 4 * (1 - rr) * dc
    return dg * W + g * dW + 8 * dc * WW + 8 * c * dWW


def mrp_compose(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The MRP of the rotation ``b`` followed by ``a`` (NEML2's ``a * b``):
    ``((1 - b.b) a + (1 - a.a) b - 2 b x a) / (1 + (a.a)(b.b) - 2 a.b)``."""
    aa, bb = dot(a, a)[..., None], dot(b, b)[..., None]
    num = (1 - bb) * a + (1 - aa) * b - 2 * cross(b, a)
    den = 1 + aa * bb - 2 * dot(a, b)[..., None]
    return num / den


def mrp_compose_derivatives(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """d :func:`mrp_compose` / d a and d / d b, each ``(..., 3, 3)``."""
    eye = identity_block((3,), a)
    aa, bb = dot(a, a)[..., None], dot(b, b)[..., None]
    num = (1 - bb) * a + (1 - aa) * b - 2 * cross(b, a)
    den = 1 + aa * bb - 2 * dot(a, b)[..., None]
    # b x a = skew(b) a = -skew(a) b
    dnum_da = (1 - bb)[..., None] * eye - 2 * outer(b, a) - 2 * wr2_to_full(b)
    dnum_db = (1 - aa)[..., None] * eye - 2 * outer(a, b) + 2 * wr2_to_full(a)
    dden_da = 2 * bb * a - 2 * b
    dden_db = 2 * aa * b - 2 * a
    d = den[..., None]
    return (
        dnum_da / d - outer(num, dden_da) / d**2,
        dnum_db / d - outer(num, dden_db) / d**2,
    )


#: Below this squared norm NEML2's exponential map switches to its Taylor expansion.
EXP_MAP_THRESHOLD = torch.finfo(torch.float64).eps ** (1.0 / 3.0)


def _exp_map_coefficients(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``f`` and ``2 f'`` of NEML2's exponential map ``exp(w) = f(x) w``, ``x = w.w``:
    ``f = tan(x/2) / (2 x cos(x/2))``, and its Taylor expansion ``1/4 + 5 x^2 / 96``
    (``2 f' = 5 x / 24``) where ``x`` is below :data:`EXP_MAP_THRESHOLD`."""
    x = dot(w, w)
    big = x > EXP_MAP_THRESHOLD
    safe = torch.where(big, x, torch.ones_like(x))
    half = safe / 2
    sec = 1 / torch.cos(half)
    tan = torch.tan(half)
    f = tan * sec / (2 * safe)
    df2 = (safe * sec**3 + tan * (safe * tan - 2) * sec) / (2 * safe * safe)
    f = torch.where(big, f, 0.25 + 5 * x * x / 96)
    df2 = torch.where(big, df2, 5 * x / 24)
    return f, df2


def wr2_exp_map(w: torch.Tensor) -> torch.Tensor:
    """The rotation (MRP, ``(..., 3)``) NEML2's ``WR2::exp_map`` gives a spin increment
    ``w`` (``(..., 3)``): ``f(w.w) w``, see :func:`_exp_map_coefficients`. Note that NEML2
    takes the tangent of the *squared* norm: this agrees with the exact map
    ``w tan(|w| / 4) / |w|`` only to first order in ``w``."""
    f, _ = _exp_map_coefficients(w)
    return f[..., None] * w


def wr2_exp_map_derivative(w: torch.Tensor) -> torch.Tensor:
    """d :func:`wr2_exp_map` / d w, ``(..., 3, 3)``: ``f I + 2 f' w w^T``."""
    f, df2 = _exp_map_coefficients(w)
    return f[..., None, None] * identity_block((3,), w) + df2[..., None, None] * outer(w, w)
