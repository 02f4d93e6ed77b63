"""Crystal plasticity with NEML2 3.1.0's type names, options, defaults and variables.

Per-slip-system quantities (resolved shears, slip strengths, slip rates, per-slip
dislocation densities) are Scalars with one sub-batch axis of ``nslip`` entries (see
:mod:`.sub_batch`): shape ``(B, nslip)``. The models that read the crystal geometry
(option ``crystal_geometry``, default ``crystal_geometry``, naming a ``[Data]`` block;
:class:`~neml2.data_blocks.CrystalGeometry`) introduce that axis
(``ResolvedShear``, ``SingleSlipStrengthMap``) or sum over it (``PlasticDeformationRate``,
``PlasticSpatialVelocityGradient``, ``PlasticVorticity``); ``SumSlipRates`` sums over the
axis its input carries; the others work slip system by slip system.

With ``Q`` the orientation matrix and ``A_i = d_i (x) n_i`` the Schmid tensor of slip
system ``i`` (``M_i`` its symmetric, ``W_i`` its skew part):

* ``ResolvedShear``: ``tau_i = sigma : Q M_i Q^T``;
* ``PowerLawSlipRule``: ``gdot_i = gamma0 |tau_i / tauhat_i|^(n-1) tau_i / tauhat_i``;
* ``SumSlipRates``: ``sum_i |gdot_i|``;
* ``SingleSlipStrengthMap``: ``tauhat_i = tau_bar + constant_strength``;
* ``DislocationObstacleStrengthMap``: ``tauhat_i = constant_strength + alpha mu b sqrt(rho_i)``;
* ``VoceSingleSlipHardeningRule``: ``tau_bar' = theta0 (1 - tau_bar / tau_f) sum |gdot|``;
* ``LinearSingleSlipHardeningRule``: ``tau_bar' = theta sum |gdot|``;
* ``PerSlipForestDislocationEvolution``: ``rho_i' = (k1 sqrt(rho_i) - k2 rho_i) |gdot_i|``;
* ``PlasticDeformationRate``: ``d^p = sum_i gdot_i Q M_i Q^T``;
* ``PlasticSpatialVelocityGradient``: ``l^p = sum_i gdot_i Q A_i Q^T``;
* ``PlasticVorticity``: ``w^p = sum_i gdot_i Q W_i Q^T``;
* ``ElasticStrainRate``: ``e' = d - d^p + sym(w e - e w)``;
* ``OrientationRate``: ``Omega = w - w^p + skew(d^p e - e d^p)``;
* ``FixOrientation``: the MRP ``r``, or its shadow ``-r / |r|^2`` where ``|r|^2 >= threshold``.

Every derivative is analytic. The geometry enters the graphs as constants.

This module holds the helpers of the family and the models that rotate the slip systems
into the sample frame (``ResolvedShear`` and the slip sums); :mod:`.crystal_slip` holds
the slip rules, strengths and hardening, :mod:`.crystal_kinematics` the elastic strain
and orientation rates, ``FixOrientation`` and ``CrystalPlasticityStrainPredictor``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import torch

from ..data_blocks import CrystalGeometry, resolve_data
from ..hit import Section
from ..tensors import base_shape, full_to_sr2, full_to_wr2, sr2_to_full, wr2_to_full
from .base import Blocks, Leaf, Model, Tensors, Variable, check_distinct, variable_name
from .constants import constant
from .registry import register

R2 = base_shape("R2")
SR2 = base_shape("SR2")
WR2 = base_shape("WR2")
MRP = base_shape("MRP")

Shape = tuple[int, ...]


def _sr2_basis(like: torch.Tensor) -> torch.Tensor:
    """The full matrices of the six Mandel basis vectors, ``(6, 3, 3)``."""
    return sr2_to_full(torch.eye(6, dtype=like.dtype).to(like.device))


def _wr2_basis(like: torch.Tensor) -> torch.Tensor:
    """The skew matrices of the three axial basis vectors, ``(3, 3, 3)``."""
    return wr2_to_full(torch.eye(3, dtype=like.dtype).to(like.device))


def _columns(images: torch.Tensor) -> torch.Tensor:
    """``(B, k, *out)`` images of k basis directions as a block ``(B, *out, k)``."""
    return images.movedim(1, -1)


def rotated(Q: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
    """``Q X Q^T`` for ``Q`` ``(B, 3, 3)`` and ``X`` ``(B, ..., 3, 3)``."""
    shape = (Q.shape[0],) + (1,) * (X.dim() - 3) + (3, 3)
    q = Q.reshape(shape)
    return q @ X @ q.transpose(-1, -2)


def rotated_derivative(Q: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
    """d (Q X Q^T) / d Q, ``(B, 3, 3, 3, 3)`` (``[k, l, p, q]``), for ``X`` ``(B, 3, 3)``:
    ``delta_kp (X Q^T)_ql + (Q X)_kq delta_lp``."""
    eye = torch.eye(3, dtype=Q.dtype).to(Q.device)
    xqt = X @ Q.transpose(-1, -2)
    qx = Q @ X
    return torch.einsum("kp,bql->bklpq", eye, xqt) + torch.einsum("bkq,lp->bklpq", qx, eye)


def _geometry(section: Section) -> CrystalGeometry:
    name = variable_name(section, "crystal_geometry", "crystal_geometry")
    return resolve_data(section, "crystal_geometry", name)


class _CrystalModel(Leaf):
    """A model that reads the crystal geometry; its per-slip variables carry the slip axis
    from the start. ``spec``: ``(key, default name, shape or None for per-slip, output?)``."""

    spec: ClassVar[tuple[tuple[str, str, Shape | None, bool], ...]] = ()
    extra_options: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.options = frozenset(
            {k for k, _, _, _ in cls.spec} | {"crystal_geometry"} | cls.extra_options
        )

    def __init__(self, name: str, names: Mapping[str, str], geometry: CrystalGeometry) -> None:
        self.names = dict(names)
        self.geometry = geometry
        n = geometry.nslip
        self.nslip = n

        def var(key: str, shape: Shape | None) -> Variable:
            if shape is None:
                return Variable(self.names[key], (n,), (n,))
            return Variable(self.names[key], shape)

        # The Schmid tensors as numbers, formed here once, eagerly (see schmid())
        A = geometry.A
        self._schmid = {
            "A": A.tolist(),
            "M": (0.5 * (A + A.transpose(-1, -2))).tolist(),
            "W": (0.5 * (A - A.transpose(-1, -2))).tolist(),
        }

        inputs = [var(k, s) for k, _, s, out in self.spec if not out]
        outputs = [var(k, s) for k, _, s, out in self.spec if out]
        super().__init__(name, inputs, outputs, {})

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        names = {k: variable_name(section, k, d) for k, d, _, _ in cls.spec}
        check_distinct(section, names)
        return cls(section.name, names, _geometry(section))

    def with_sub_batch(self, subs: Mapping[str, Shape]) -> Model:
        """The slip axis of a per-slip input is this model's own; other sub-batch axes
        (one crystal per grain, for instance) are not supported."""
        for var in self.inputs:
            given = tuple(subs.get(var.name, ()))
            if given and given != var.sub_batch:
                raise ValueError(
                    f"{self.type_name} '{self.name}': input '{var.name}' has sub-batch axes "
                    f"{given}; expected {var.sub_batch or 'none'} (the crystal's "
                    f"{self.nslip} slip systems)"
                )
        return self

    def kernel(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        xs = {k: x[v] for k, v in self.names.items() if v in x}
        out, jac = self.compute(xs, derivatives)
        rename = self.names
        return (
            {rename[k]: v for k, v in out.items()},
            {rename[o]: {rename[i]: b for i, b in row.items()} for o, row in jac.items()},
            {},
        )

    def compute(self, x: Mapping[str, torch.Tensor], derivatives: bool) -> tuple[Tensors, Blocks]:
        """Outputs and non-zero Jacobian blocks by option key (subclasses)."""
        raise NotImplementedError

    def schmid(self, like: torch.Tensor, part: str) -> torch.Tensor:
        """The Schmid tensors ``(nslip, 3, 3)``: ``A`` whole, ``M`` symmetric, ``W`` skew,
        with the dtype and on the device of ``like`` (a constant of a compiled graph, see
        :mod:`neml2.models.constants`)."""
        return constant(f"{self.name}.schmid.{part}", self._schmid[part], like)


@register
class ResolvedShear(_CrystalModel):
    """``resolved_shears_i = stress : Q M_i Q^T`` (per slip system)."""

    type_name = "ResolvedShear"
    spec = (
        ("stress", "stress", SR2, False),
        ("orientation_matrix", "orientation_matrix", R2, False),
        ("resolved_shears", "resolved_shears", None, True),
    )

    def compute(self, x: Mapping[str, torch.Tensor], derivatives: bool) -> tuple[Tensors, Blocks]:
        stress, Q = x["stress"], x["orientation_matrix"]
        M = self.schmid(stress, "M")
        rot = full_to_sr2(rotated(Q, M.unsqueeze(0)))  # (B, nslip, 6)
        tau = (rot * stress.unsqueeze(1)).sum(-1)
        if not derivatives:
            return {"resolved_shears": tau}, {}
        # d tau_i / d Q = 2 S Q M_i with S the full stress
        S = sr2_to_full(stress)
        dQ = 2 * (S.unsqueeze(1) @ Q.unsqueeze(1) @ M.unsqueeze(0))
        return {"resolved_shears": tau}, {
            "resolved_shears": {"stress": rot, "orientation_matrix": dQ}
        }


class _SlipSum(_CrystalModel):
    """``output = convert(Q (sum_i slip_rates_i X_i) Q^T)`` for Schmid part ``part``."""

    part: ClassVar[str]
    out_key: ClassVar[str]
    out_shape: ClassVar[Shape]

    def __init_subclass__(cls, **kwargs: object) -> None:
        cls.spec = (
            ("orientation_matrix", "orientation_matrix", R2, False),
            ("slip_rates", "slip_rates", None, False),
            (cls.out_key, cls.out_key, cls.out_shape, True),
        )
        super().__init_subclass__(**kwargs)

    def convert(self, m: torch.Tensor) -> torch.Tensor:
        """The output's storage of a full matrix ``(..., 3, 3)``."""
        return m

    def compute(self, x: Mapping[str, torch.Tensor], derivatives: bool) -> tuple[Tensors, Blocks]:
        Q, g = x["orientation_matrix"], x["slip_rates"]
        X = self.schmid(g, self.part)  # (nslip, 3, 3)
        crystal = (g[:, :, None, None] * X.unsqueeze(0)).sum(1)
        out = self.convert(rotated(Q, crystal))
        if not derivatives:
            return {self.out_key: out}, {}
        d_g = _columns(self.convert(rotated(Q, X.unsqueeze(0).expand(g.shape[0], -1, 3, 3))))
        d_full = rotated_derivative(Q, crystal)  # (B, k, l, p, q)
        if self.out_shape == R2:
            d_Q = d_full
        else:  # convert the (k, l) axes: (B, p, q, *out) -> (B, *out, p, q)
            d_Q = self.convert(d_full.movedim((1, 2), (-2, -1))).movedim(-1, 1)
        return {self.out_key: out}, {self.out_key: {"orientation_matrix": d_Q, "slip_rates": d_g}}


@register
class PlasticDeformationRate(_SlipSum):
    """``plastic_deformation_rate = sum_i slip_rates_i Q M_i Q^T`` (SR2)."""

    type_name = "PlasticDeformationRate"
    part = "M"
    out_key = "plastic_deformation_rate"
    out_shape = SR2

    def convert(self, m: torch.Tensor) -> torch.Tensor:
        return full_to_sr2(m)


@register
class PlasticSpatialVelocityGradient(_SlipSum):
    """``plastic_spatial_velocity_gradient = sum_i slip_rates_i Q A_i Q^T`` (R2)."""

    type_name = "PlasticSpatialVelocityGradient"
    part = "A"
    out_key = "plastic_spatial_velocity_gradient"
    out_shape = R2


@register
class PlasticVorticity(_SlipSum):
    """``plastic_vorticity = sum_i slip_rates_i Q W_i Q^T`` (WR2)."""

    type_name = "PlasticVorticity"
    part = "W"
    out_key = "plastic_vorticity"
    out_shape = WR2

    def convert(self, m: torch.Tensor) -> torch.Tensor:
        return full_to_wr2(m)
