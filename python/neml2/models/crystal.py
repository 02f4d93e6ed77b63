"""Crystal plasticity with NEML2 3.1.0's type names, options, defaults and variables.

Per-slip-system quantities (resolved shears, slip strengths, slip rates, per-slip
dislocation densities) are Scalars with one sub-batch axis of ``nslip`` entries (see
:mod:`.sub_batch`): shape ``(B, nslip)``. The models that read the crystal geometry
(option ``crystal_geometry``, default ``crystal_geometry``, naming a ``[Data]`` block;
:class:`~neml2.tensor_blocks.CrystalGeometry`) introduce that axis
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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import torch

from ..hit import Section
from ..tensor_blocks import CrystalGeometry, resolve_data
from ..tensors import base_shape, full_to_sr2, full_to_wr2, sr2_to_full, wr2_to_full
from .base import Blocks, Leaf, Model, Tensors, Variable, check_distinct, variable_name
from .plasticity import SCALAR, Block
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
        A = geometry.cartesian_slip_directions[:, :, None] * geometry.cartesian_slip_planes[:, None, :]
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
        """The Schmid tensors ``(nslip, 3, 3)``: ``A`` whole, ``M`` symmetric, ``W`` skew."""
        # Made on the graph's device from numbers, so that the graph holds them as a constant
        # of that device: a CPU constant copied over inside the graph is folded by Inductor
        # (torch 2.11) into a device constant whose consumers still run as CPU kernels (a
        # segmentation fault on a GPU), or whose product it fuses into a GPU kernel that reads
        # the CPU memory
        return torch.tensor(self._schmid[part], dtype=like.dtype, device=like.device)


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


@register
class SingleSlipStrengthMap(_CrystalModel):
    """``slip_strengths_i = slip_hardening + constant_strength`` on every slip system."""

    type_name = "SingleSlipStrengthMap"
    spec = (
        ("slip_hardening", "slip_hardening", SCALAR, False),
        ("slip_strengths", "slip_strengths", None, True),
    )
    extra_options = frozenset({"constant_strength"})

    def __init__(
        self, name: str, names: Mapping[str, str], geometry: CrystalGeometry, value: float
    ) -> None:
        super().__init__(name, names, geometry)
        self.parameters = {f"{name}.constant_strength": torch.tensor(value, dtype=self.dtype)}

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        names = {k: variable_name(section, k, d) for k, d, _, _ in cls.spec}
        check_distinct(section, names)
        return cls(section.name, names, _geometry(section), section.number("constant_strength"))

    def kernel(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        tau = x[self.names["slip_hardening"]]
        c = p[f"{self.name}.constant_strength"]
        ones = torch.ones((tau.shape[0], self.nslip), dtype=tau.dtype, device=tau.device)
        out = {self.names["slip_strengths"]: (tau + c).unsqueeze(-1) * ones}
        if not derivatives:
            return out, {}, {}
        name = self.names["slip_strengths"]
        return (
            out,
            {name: {self.names["slip_hardening"]: ones}},
            {name: {f"{self.name}.constant_strength": ones}},
        )


@register
class ElasticStrainRate(Block):
    """``elastic_strain_rate = deformation_rate - plastic_deformation_rate + sym(w e - e w)``
    (``e`` the elastic strain, ``w`` the vorticity)."""

    type_name = "ElasticStrainRate"
    inputs_spec = (
        ("elastic_strain", "elastic_strain", SR2),
        ("deformation_rate", "deformation_rate", SR2),
        ("vorticity", "vorticity", WR2),
        ("plastic_deformation_rate", "plastic_deformation_rate", SR2),
    )
    outputs_spec = (("elastic_strain_rate", "elastic_strain_rate", SR2),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        e, d, w, dp = (
            x["elastic_strain"],
            x["deformation_rate"],
            x["vorticity"],
            x["plastic_deformation_rate"],
        )
        E, W = sr2_to_full(e), wr2_to_full(w)
        out = {"elastic_strain_rate": d - dp + full_to_sr2(W @ E - E @ W)}
        if not derivatives:
            return out, {}, {}
        n = e.shape[0]
        eye = torch.eye(6, dtype=e.dtype).to(e.device).expand(n, 6, 6)
        dE = _sr2_basis(e).unsqueeze(0)  # (1, 6, 3, 3)
        dW = _wr2_basis(e).unsqueeze(0)  # (1, 3, 3, 3)
        Eb, Wb = E.unsqueeze(1), W.unsqueeze(1)
        row = {
            "deformation_rate": eye.clone(),
            "plastic_deformation_rate": -eye,
            "elastic_strain": _columns(full_to_sr2(Wb @ dE - dE @ Wb)),
            "vorticity": _columns(full_to_sr2(dW @ Eb - Eb @ dW)),
        }
        return out, {"elastic_strain_rate": row}, {}


@register
class OrientationRate(Block):
    """``orientation_rate = vorticity - plastic_vorticity + skew(d^p e - e d^p)`` (WR2;
    ``e`` the elastic strain, ``d^p`` the plastic deformation rate)."""

    type_name = "OrientationRate"
    inputs_spec = (
        ("elastic_strain", "elastic_strain", SR2),
        ("vorticity", "vorticity", WR2),
        ("plastic_deformation_rate", "plastic_deformation_rate", SR2),
        ("plastic_vorticity", "plastic_vorticity", WR2),
    )
    outputs_spec = (("orientation_rate", "orientation_rate", WR2),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        e, w, dp, wp = (
            x["elastic_strain"],
            x["vorticity"],
            x["plastic_deformation_rate"],
            x["plastic_vorticity"],
        )
        E, D = sr2_to_full(e), sr2_to_full(dp)
        out = {"orientation_rate": w - wp + full_to_wr2(D @ E - E @ D)}
        if not derivatives:
            return out, {}, {}
        n = e.shape[0]
        eye = torch.eye(3, dtype=e.dtype).to(e.device).expand(n, 3, 3)
        basis = _sr2_basis(e).unsqueeze(0)
        Eb, Db = E.unsqueeze(1), D.unsqueeze(1)
        row = {
            "vorticity": eye.clone(),
            "plastic_vorticity": -eye,
            "elastic_strain": _columns(full_to_wr2(Db @ basis - basis @ Db)),
            "plastic_deformation_rate": _columns(full_to_wr2(basis @ Eb - Eb @ basis)),
        }
        return out, {"orientation_rate": row}, {}


@register
class PowerLawSlipRule(Block):
    """``slip_rates = gamma0 |r|^(n-1) r`` with ``r = resolved_shears / slip_strengths``,
    slip system by slip system."""

    type_name = "PowerLawSlipRule"
    inputs_spec = (
        ("resolved_shears", "resolved_shears", SCALAR),
        ("slip_strengths", "slip_strengths", SCALAR),
    )
    outputs_spec = (("slip_rates", "slip_rates", SCALAR),)
    params_spec = (("gamma0", None), ("n", None))

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        tau, strength = x["resolved_shears"], x["slip_strengths"]
        gamma0, n = p["gamma0"], p["n"]
        ratio = tau / strength
        shape = torch.pow(torch.abs(ratio), n - 1) * ratio
        rate = gamma0 * shape
        if not derivatives:
            return {"slip_rates": rate}, {}, {}
        f = gamma0 * torch.pow(torch.abs(ratio), n - 1)
        jac = {
            "slip_rates": {
                "resolved_shears": n * f / strength,
                "slip_strengths": -n * rate / strength,
            }
        }
        pjac = {"slip_rates": {"gamma0": shape, "n": rate * torch.log(torch.abs(ratio))}}
        return {"slip_rates": rate}, jac, pjac


@register
class SumSlipRates(Leaf):
    """``sum_slip_rates = sum_i |slip_rates_i|`` over the last sub-batch axis of
    ``slip_rates``, which ``sum_slip_rates`` no longer has."""

    type_name = "SumSlipRates"
    options = frozenset({"slip_rates", "sum_slip_rates"})

    def __init__(self, name: str, source: str, target: str, sub: Shape = ()) -> None:
        self.source, self.target, self.sub = source, target, tuple(sub)
        inputs = [Variable(source, self.sub, self.sub)]
        outputs = [Variable(target, self.sub[:-1], self.sub[:-1])]
        super().__init__(name, inputs, outputs, {})

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        names = {
            "slip_rates": variable_name(section, "slip_rates", "slip_rates"),
            "sum_slip_rates": variable_name(section, "sum_slip_rates", "sum_slip_rates"),
        }
        check_distinct(section, names)
        return cls(section.name, names["slip_rates"], names["sum_slip_rates"])

    def with_sub_batch(self, subs: Mapping[str, Shape]) -> Model:
        sub = tuple(subs.get(self.source, ()))
        if not sub:
            raise ValueError(
                f"SumSlipRates '{self.name}': '{self.source}' has no sub-batch axis to sum "
                "over (one per slip system); declare it in [Settings]/[example_batch_shape] "
                "or produce it with a model of the crystal geometry"
            )
        return SumSlipRates(self.name, self.source, self.target, sub)

    def kernel(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        g = x[self.source]
        out = {self.target: g.abs().sum(-1)}
        if not derivatives:
            return out, {}, {}
        sign = torch.sign(g)
        lead = self.sub[:-1]
        if lead:  # zero between entries of the remaining sub-batch axes
            count = 1
            for s in lead:
                count *= s
            eye = torch.eye(count, dtype=g.dtype).to(g.device).reshape((1, *lead, *lead, 1))
            sign = sign.unsqueeze(len(lead) + 1).reshape(
                (g.shape[0], *([1] * len(lead)), *lead, self.sub[-1])
            )
            block = eye * sign
        else:
            block = sign
        return out, {self.target: {self.source: block}}, {}


@register
class DislocationObstacleStrengthMap(Block):
    """``slip_strengths = constant_strength + alpha mu b sqrt(dislocation_density)``,
    slip system by slip system."""

    type_name = "DislocationObstacleStrengthMap"
    inputs_spec = (("dislocation_density", "dislocation_density", SCALAR),)
    outputs_spec = (("slip_strengths", "slip_strengths", SCALAR),)
    params_spec = (("constant_strength", None), ("alpha", None), ("mu", None), ("b", None))

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        root = torch.sqrt(x["dislocation_density"])
        alpha, mu, b = p["alpha"], p["mu"], p["b"]
        out = {"slip_strengths": p["constant_strength"] + alpha * mu * b * root}
        if not derivatives:
            return out, {}, {}
        jac = {"slip_strengths": {"dislocation_density": alpha * mu * b * 0.5 / root}}
        pjac = {
            "slip_strengths": {
                "constant_strength": torch.ones_like(root),
                "alpha": mu * b * root,
                "mu": alpha * b * root,
                "b": alpha * mu * root,
            }
        }
        return out, jac, pjac


@register
class VoceSingleSlipHardeningRule(Block):
    """``slip_hardening_rate = initial_slope (1 - slip_hardening / saturated_hardening)
    sum_slip_rates``."""

    type_name = "VoceSingleSlipHardeningRule"
    inputs_spec = (
        ("slip_hardening", "slip_hardening", SCALAR),
        ("sum_slip_rates", "sum_slip_rates", SCALAR),
    )
    outputs_spec = (("slip_hardening_rate", "slip_hardening_rate", SCALAR),)
    params_spec = (("initial_slope", None), ("saturated_hardening", None))

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        tau, total = x["slip_hardening"], x["sum_slip_rates"]
        theta, tauf = p["initial_slope"], p["saturated_hardening"]
        factor = 1 - tau / tauf
        out = {"slip_hardening_rate": theta * factor * total}
        if not derivatives:
            return out, {}, {}
        jac = {
            "slip_hardening_rate": {
                "slip_hardening": -theta / tauf * total,
                "sum_slip_rates": theta * factor,
            }
        }
        pjac = {
            "slip_hardening_rate": {
                "initial_slope": factor * total,
                "saturated_hardening": theta * tau / (tauf * tauf) * total,
            }
        }
        return out, jac, pjac


@register
class LinearSingleSlipHardeningRule(Block):
    """``slip_hardening_rate = hardening_slope sum_slip_rates`` (``slip_hardening`` is an
    input that the rate does not depend on, as in NEML2)."""

    type_name = "LinearSingleSlipHardeningRule"
    inputs_spec = (
        ("slip_hardening", "slip_hardening", SCALAR),
        ("sum_slip_rates", "sum_slip_rates", SCALAR),
    )
    outputs_spec = (("slip_hardening_rate", "slip_hardening_rate", SCALAR),)
    params_spec = (("hardening_slope", None),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        total = x["sum_slip_rates"]
        theta = p["hardening_slope"]
        out = {"slip_hardening_rate": theta * total}
        if not derivatives:
            return out, {}, {}
        jac = {"slip_hardening_rate": {"sum_slip_rates": theta * torch.ones_like(total)}}
        return out, jac, {"slip_hardening_rate": {"hardening_slope": total}}


@register
class PerSlipForestDislocationEvolution(Block):
    """``dislocation_density_rate = (k1 sqrt(rho) - k2 rho) |slip_rates|`` slip system by
    slip system (``rho`` the dislocation density; the output defaults to
    ``<dislocation_density>_rate``)."""

    type_name = "PerSlipForestDislocationEvolution"
    inputs_spec = (
        ("dislocation_density", "dislocation_density", SCALAR),
        ("slip_rates", "slip_rates", SCALAR),
    )
    outputs_spec = (("dislocation_density_rate", "", SCALAR),)
    params_spec = (("k1", None), ("k2", None))

    @classmethod
    def default_names(cls, section: Section) -> dict[str, str]:
        rho = variable_name(section, "dislocation_density", "dislocation_density")
        return {
            "dislocation_density": rho,
            "slip_rates": variable_name(section, "slip_rates", "slip_rates"),
            "dislocation_density_rate": variable_name(
                section, "dislocation_density_rate", f"{rho}_rate"
            ),
        }

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        rho, g = x["dislocation_density"], x["slip_rates"]
        k1, k2 = p["k1"], p["k2"]
        root, speed = torch.sqrt(rho), torch.abs(g)
        growth = k1 * root - k2 * rho
        out = {"dislocation_density_rate": growth * speed}
        if not derivatives:
            return out, {}, {}
        jac = {
            "dislocation_density_rate": {
                "dislocation_density": (0.5 * k1 / root - k2) * speed,
                "slip_rates": growth * torch.sign(g),
            }
        }
        pjac = {"dislocation_density_rate": {"k1": root * speed, "k2": -rho * speed}}
        return out, jac, pjac


@register
class FixOrientation(Block):
    """``output = input`` (MRP) where ``|input|^2 < threshold`` (default 1, a constant),
    else its shadow set ``-input / |input|^2``: the same rotation."""

    type_name = "FixOrientation"
    inputs_spec = (("input", "input", MRP),)
    outputs_spec = (("output", "output", MRP),)
    extra_options = frozenset({"threshold"})

    def configure(self, section: Section | None) -> None:
        self.threshold = section.number("threshold", 1.0) if section is not None else 1.0

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        r = x["input"]
        ns = (r * r).sum(-1, keepdim=True)
        keep = ns < self.threshold
        out = {"output": torch.where(keep, r, -r / ns)}
        if not derivatives:
            return out, {}, {}
        eye = torch.eye(3, dtype=r.dtype).to(r.device).expand(r.shape[0], 3, 3)
        nsb = ns.unsqueeze(-1)
        shadow = 2 * r.unsqueeze(-1) * r.unsqueeze(-2) / (nsb * nsb) - eye / nsb
        return out, {"output": {"input": torch.where(keep.unsqueeze(-1), eye, shadow)}}, {}


@register
class CrystalPlasticityStrainPredictor(Block):
    """The initial guess of the elastic strain of a crystal-plasticity update:
    ``elastic_strain = e~1 + scale (t - t~1) deformation_rate`` where ``|e~1| < threshold``
    (a crystal at rest, whose first step would otherwise start from zero stress), else
    ``e~1`` (``|.|`` the Frobenius norm of the Mandel vector). ``scale`` (default 1) and
    ``threshold`` (default 1e-3) are parameters; the derivatives are those of the
    branch taken."""

    type_name = "CrystalPlasticityStrainPredictor"
    inputs_spec = (
        ("deformation_rate", "deformation_rate", SR2),
        ("time", "t", SCALAR),
        ("time_old", "", SCALAR),
        ("elastic_strain_old", "", SR2),
    )
    outputs_spec = (("elastic_strain", "elastic_strain", SR2),)
    params_spec = (("scale", 1.0), ("threshold", 1e-3))
    options = frozenset({"deformation_rate", "time", "elastic_strain", "scale", "threshold"})

    @classmethod
    def default_names(cls, section: Section) -> dict[str, str]:
        time = variable_name(section, "time", "t")
        strain = variable_name(section, "elastic_strain", "elastic_strain")
        return {
            "deformation_rate": variable_name(section, "deformation_rate", "deformation_rate"),
            "time": time,
            "time_old": f"{time}~1",
            "elastic_strain_old": f"{strain}~1",
            "elastic_strain": strain,
        }

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        d, old = x["deformation_rate"], x["elastic_strain_old"]
        dt = (x["time"] - x["time_old"]).unsqueeze(-1)
        scale, threshold = p["scale"], p["threshold"]
        rest = (old.square().sum(-1).sqrt() < threshold).unsqueeze(-1)  # (B, 1)
        out = {"elastic_strain": torch.where(rest, old + scale * dt * d, old)}
        if not derivatives:
            return out, {}, {}
        on = rest.to(d.dtype)
        eye = torch.eye(6, dtype=d.dtype).to(d.device).expand(d.shape[0], 6, 6)
        jac = {
            "elastic_strain": {
                "deformation_rate": (on * scale * dt).unsqueeze(-1) * eye,
                "time": on * scale * d,
                "time_old": -on * scale * d,
                "elastic_strain_old": eye.clone(),
            }
        }
        pjac = {"elastic_strain": {"scale": on * dt * d, "threshold": torch.zeros_like(d)}}
        return out, jac, pjac
