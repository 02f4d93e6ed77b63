"""Elasticity tensors and anisotropic elasticity: IsotropicElasticityTensor,
CubicElasticityTensor and GeneralElasticity, with NEML2 3.1.0's names, options and
defaults.

The two tensor models have no inputs: their output, an SSR4 (Mandel ``(6, 6)``) named
after the block unless ``C`` names it, is one point that broadcasts over any batch, and
its derivatives are those with respect to the elastic constants (parameters
``<block>.E``, ``<block>.nu``, ...), from the same closed forms evaluated with
:class:`~neml2.models.dual.Dual` numbers. GeneralElasticity rotates a stiffness tensor
(the parameter ``<block>.elastic_stiffness_tensor``) into the lab frame of an
orientation (MRP) and contracts it with the strain.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch

from ..hit import _NUMBER, Section
from ..tensor_blocks import resolve_tensor
from ..tensors import (
    base_shape,
    full_to_sr2,
    identity_block,
    mrp_to_matrix,
    mrp_to_matrix_derivative,
)
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
from .dual import Dual
from .elasticity import (
    COEFFICIENT_SYMBOLS,
    SINGULAR,
    coefficient_types,
    lame_parameters,
    refuse_singular,
)
from .registry import register

__all__ = [
    "CubicElasticityTensor",
    "GeneralElasticity",
    "IsotropicElasticityTensor",
    "mandel_rotation",
    "one_scalar",
]

SSR4 = base_shape("SSR4")
SR2 = base_shape("SR2")
MRP = base_shape("MRP")


def one_scalar(section: Section, key: str, word: str | None = None) -> torch.Tensor:
    """One Scalar of option ``key``, 0-d float64: the number ``word`` (the whole value
    when None), or the name of a ``[Tensors]`` block holding a single Scalar."""
    if word is None:
        value = tensor_option(section, key, "Scalar")
    elif _NUMBER.fullmatch(word):
        value = torch.tensor(section.finite(key, word), dtype=Model.dtype)
    else:
        value = resolve_tensor(section, key, word, "Scalar")
    if value.dim() != 0:
        raise section.error(
            key,
            f"parameter '{key}': expected one Scalar, got a tensor of shape {tuple(value.shape)}",
        )
    return value.clone()


def _coefficients(section: Section, count: int, order: Sequence[str]) -> dict[str, torch.Tensor]:
    """``coefficients`` (numbers or [Tensors] names) keyed by the symbols of
    ``coefficient_types``, which must be ``count`` distinct constants of the symbols
    ``order``; returned in that order (NEML2's declaration order)."""
    allowed = [k for k, v in COEFFICIENT_SYMBOLS.items() if v in order]
    symbols = coefficient_types(section, count, allowed)
    words = section.strings("coefficients", count=count)
    values = {
        s: one_scalar(section, "coefficients", w) for s, w in zip(symbols, words, strict=True)
    }
    return {s: values[s] for s in order if s in values}


def _mandel_units(like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The symmetric identity (6, 6), ``I (x) I`` (6, 6) and ``I`` (6) of Mandel storage."""
    eye = identity_block(SR2, like)
    ones = torch.ones(3, dtype=like.dtype, device=like.device)
    normal = torch.cat([ones, torch.zeros_like(ones)])
    return eye, normal.unsqueeze(-1) * normal, normal


class _ElasticityTensor(Model):
    """An SSR4 output computed from scalar elastic constants (the parameters).

    :meth:`tensor` returns the ``(6, 6)`` tensor and its derivative along each parameter,
    in parameter order, both from one evaluation with :class:`Dual` coefficients.
    """

    type_name = "_ElasticityTensor"
    options = frozenset({"C", "coefficients", "coefficient_types"})

    def __init__(self, name: str, output: str, coefficients: Mapping[str, torch.Tensor]) -> None:
        self.target = output
        #: parameter name -> symbol, in NEML2's order
        self.symbols = {f"{name}.{s}": s for s in coefficients}
        params = {f"{name}.{s}": v for s, v in coefficients.items()}
        super().__init__(name, [], [Variable(output, SSR4)], params)

    def tensor(self, p: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """The tensor ``(6, 6)`` and its derivative along each parameter (in order)."""
        raise NotImplementedError

    def eval_forward(self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]) -> Tensors:
        value, _ = self.tensor(p)
        return {self.target: value.unsqueeze(0)}

    def eval_jacobian(self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]) -> Blocks:
        return {self.target: {}}

    def eval_param_jacobian(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]
    ) -> Blocks:
        _, grads = self.tensor(p)
        return {self.target: dict(zip(self.symbols, grads, strict=True))}

    def param_jacobian_batched(self, of: str, param: str) -> bool:
        return False

    def _seeds(self, p: Mapping[str, torch.Tensor]) -> dict[str, Dual]:
        names = list(self.symbols)
        seeds = Dual.seeds([p[n] for n in names])
        return {self.symbols[n]: d for n, d in zip(names, seeds, strict=True)}


def _combine(parts: Sequence[tuple[Dual, torch.Tensor]], n: int) -> tuple[torch.Tensor, list]:
    """``sum_k c_k B_k`` and its derivative along each of ``n`` seeds, for Duals ``c_k``."""
    value = sum(c.value * basis for c, basis in parts)
    grads = [sum(c.grad[i] * basis for c, basis in parts) for i in range(n)]
    return value, grads  # type: ignore[return-value]


@register
class IsotropicElasticityTensor(_ElasticityTensor):
    """``C = 3 K I_vol + 2 G I_dev`` (``= lambda I (x) I + 2 G I_sym``), an SSR4 output
    named ``C`` (default: the block's name), from two ``coefficients`` whose
    ``coefficient_types`` are any two distinct constants of YOUNGS_MODULUS,
    POISSONS_RATIO, BULK_MODULUS, SHEAR_MODULUS and LAME_LAMBDA. NEML2 3.1.0 accepts the
    pairs (E, nu) and (K, G), in either order; the others give the same tensor through
    :func:`~neml2.models.elasticity.lame_parameters`. The parameters are
    ``<block>.<symbol>`` (E, nu, K, G, lambda), in that order."""

    type_name = "IsotropicElasticityTensor"

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        output = variable_name(section, "C", section.name)
        coefficients = _coefficients(section, 2, list(COEFFICIENT_SYMBOLS.values()))
        model = cls(section.name, output, coefficients)
        where = SINGULAR.get(frozenset(coefficients), "")
        refuse_singular(section, coefficients, [model.tensor(model.parameters)[0]], where)
        return model

    def tensor(self, p: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, list[torch.Tensor]]:
        lam, G = lame_parameters(self._seeds(p))
        eye, volume, _ = _mandel_units(next(iter(p.values())))
        return _combine([(lam, volume), (2 * G, eye)], len(self.symbols))


#: The elastic constants CubicElasticityTensor takes, in NEML2's declaration order.
CUBIC_SYMBOLS = ("G", "E", "nu")


@register
class CubicElasticityTensor(_ElasticityTensor):
    """``C = C1 I_C1 + C2 I_C2 + C3 I_C3`` (the Mandel blocks: normal diagonal, normal
    off-diagonal, shear diagonal), an SSR4 output named ``C`` (default: the block's
    name), with ``C1 = E (1 - nu) / ((1 + nu)(1 - 2 nu))``,
    ``C2 = E nu / ((1 + nu)(1 - 2 nu))`` and ``C3 = 2 G``. ``coefficient_types`` are
    SHEAR_MODULUS, YOUNGS_MODULUS and POISSONS_RATIO in any order (the one set NEML2
    3.1.0 accepts); the parameters are ``<block>.G``, ``<block>.E`` and ``<block>.nu``."""

    type_name = "CubicElasticityTensor"

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        output = variable_name(section, "C", section.name)
        coefficients = _coefficients(section, 3, CUBIC_SYMBOLS)
        model = cls(section.name, output, coefficients)
        where = SINGULAR[frozenset({"E", "nu"})]
        refuse_singular(section, coefficients, [model.tensor(model.parameters)[0]], where)
        return model

    def tensor(self, p: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, list[torch.Tensor]]:
        c = self._seeds(p)
        G, E, nu = c["G"], c["E"], c["nu"]
        denominator = (1 + nu) * (1 - 2 * nu)
        eye, volume, normal = _mandel_units(next(iter(p.values())))
        diagonal = eye * normal  # I_C1: the normal block's diagonal
        shear = eye - diagonal  # I_C3: the shear block's diagonal
        off = volume - diagonal  # I_C2: the normal block without its diagonal
        parts = [
            (E * (1 - nu) / denominator, diagonal),
            (E * nu / denominator, off),
            (2 * G, shear),
        ]
        return _combine(parts, len(self.symbols))


# --- GeneralElasticity ------------------------------------------------------------------


def _mandel_pairs(P: torch.Tensor) -> torch.Tensor:
    """``(..., I, J)`` from ``(..., i, j, k, l)``: :func:`full_to_sr2` over ``(k, l)``
    (giving ``J``), then over ``(i, j)`` (giving ``I``)."""
    inner = full_to_sr2(P)  # (..., i, j, J)
    return full_to_sr2(inner.movedim(-1, -3)).transpose(-1, -2)


def mandel_rotation(R: torch.Tensor) -> torch.Tensor:
    """The ``(..., 6, 6)`` matrix ``Q`` of the rotation ``s -> R s R^T`` of Mandel
    vectors for rotation matrices ``R`` ``(..., 3, 3)``; an SSR4 rotates as ``Q T Q^T``.
    ``Q_IJ`` is ``R_ik R_jl`` taken to Mandel storage over ``(i, j)`` and ``(k, l)``."""
    return _mandel_pairs(R[..., :, None, :, None] * R[..., None, :, None, :])


def mandel_rotation_derivative(R: torch.Tensor) -> torch.Tensor:
    """d Q / d R of :func:`mandel_rotation`, ``(..., 6, 6, 3, 3)``: ``Q`` is a symmetric
    bilinear form of ``R``, so along ``dR = e_p e_q^T`` it changes by twice the Mandel
    storage of ``delta_ip delta_kq R_jl``."""
    eye = identity_block((3,), R)
    P = eye[:, None, :, None, None, None] * eye[None, :, None, None, :, None]
    directions = 2 * P * R[..., None, None, None, :, None, :]  # (..., p, q, i, j, k, l)
    return _mandel_pairs(directions).movedim(-4, -1).movedim(-4, -1)


@register
class GeneralElasticity(Leaf):
    """``stress = (Q T Q^T) strain``: the stiffness ``elastic_stiffness_tensor`` (SSR4,
    36 numbers or a [Tensors] name; the parameter ``<block>.elastic_stiffness_tensor``)
    rotated by ``orientation`` (MRP). Keys (variable names): ``strain``, ``orientation``,
    ``stress``, defaulting to the key."""

    type_name = "GeneralElasticity"
    options = frozenset({"strain", "orientation", "stress", "elastic_stiffness_tensor"})

    def __init__(
        self, name: str, strain: str, orientation: str, stress: str, stiffness: torch.Tensor
    ) -> None:
        self.strain, self.orientation, self.stress = strain, orientation, stress
        self.stiffness = f"{name}.elastic_stiffness_tensor"
        super().__init__(
            name,
            [Variable(strain, SR2), Variable(orientation, MRP)],
            [Variable(stress, SR2)],
            {self.stiffness: stiffness},
        )

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        names = {k: variable_name(section, k, k) for k in ("strain", "orientation", "stress")}
        check_distinct(section, names)
        key = "elastic_stiffness_tensor"
        stiffness = tensor_option(section, key, "SSR4")
        if tuple(stiffness.shape) != SSR4:
            raise section.error(
                key,
                f"parameter '{key}': expected one SSR4, got a tensor of shape "
                f"{tuple(stiffness.shape)}",
            )
        return cls(section.name, names["strain"], names["orientation"], names["stress"], stiffness)

    def kernel(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        eps, r, T = x[self.strain], x[self.orientation], p[self.stiffness]
        R = mrp_to_matrix(r)
        Q = mandel_rotation(R)  # (B, 6, 6)
        u = (Q * eps.unsqueeze(-1)).sum(-2)  # Q^T eps
        w = (T * u.unsqueeze(-2)).sum(-1)  # T Q^T eps
        stress = (Q * w.unsqueeze(-2)).sum(-1)
        out = {self.stress: stress}
        if not derivatives:
            return out, {}, {}
        QT = (Q.unsqueeze(-1) * T.unsqueeze(-3)).sum(-2)  # Q T
        rotated = (QT.unsqueeze(-2) * Q.unsqueeze(-3)).sum(-1)  # Q T Q^T
        dQ = mandel_rotation_derivative(R)  # (B, 6, 6, 3, 3)
        # d stress = dQ w + Q T dQ^T eps, along each component of R
        du = (dQ * eps[:, :, None, None, None]).sum(1)  # (B, 6, 3, 3): dQ^T eps
        d_R = (dQ * w[:, None, :, None, None]).sum(2) + (
            QT[:, :, :, None, None] * du.unsqueeze(1)
        ).sum(2)
        dR_dr = mrp_to_matrix_derivative(r)  # (B, 3, 3, 3)
        d_r = (d_R.unsqueeze(-1) * dR_dr.unsqueeze(1)).sum((-3, -2))
        jac = {self.stress: {self.strain: rotated, self.orientation: d_r}}
        pjac = {self.stress: {self.stiffness: Q[:, :, :, None] * u[:, None, None, :]}}
        return out, jac, pjac
