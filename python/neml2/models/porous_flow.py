"""Porous flow: the effective saturation of a fluid, the capillary pressure it sets
(Brooks-Corey, van Genuchten, each with NEML2's optional logarithmic extension at low
saturation), the permeability of a porous solid as a function of its porosity (power,
exponential and Kozeny-Carman laws) and the advective stress of a swelling solid, with
NEML2 3.1.0's type names, options, defaults and variable names.

Every variable key defaults to its own name (``AdvectiveStress``'s ``js`` and ``jt`` are
optional: each Jacobian is 1 unless named). Every numeric option is a parameter
``<block>.<key>`` given as a number or a ``[Tensors]`` name; those NEML2 3.1.0 lets a
variable give (promotion) are listed in :data:`PROMOTABLE`. ``log_extension`` and
``transition_saturation`` are constants of a capillary-pressure model.

Branches follow NEML2: below the transition saturation ``Sp`` (strictly) the logarithmic
extension ``Pc(Sp) exp(k (S - Sp))``, ``k = Pc'(Sp) / Pc(Sp)``, replaces the correlation,
continuing it with the same value and slope; van Genuchten's saturation is held at
``1 - eps`` (eps the machine epsilon) where it exceeds it, value and derivative taken
there.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from ..hit import Section
from ..tensors import base_shape
from .base import Blocks, Tensors
from .block import SCALAR
from .coupling import COUPLABLE
from .kinematics import ScalarOptions
from .registry import register

__all__ = [
    "PROMOTABLE",
    "AdvectiveStress",
    "BrooksCoreyCapillaryPressure",
    "EffectiveSaturation",
    "ExponentialLawPermeability",
    "KozenyCarmanPermeability",
    "PowerLawPermeability",
    "VanGenuchtenCapillaryPressure",
]

R2 = base_shape("R2")

#: The parameters NEML2 3.1.0 lets a variable (or another model's output) give, by type.
#: The others (the permeability laws' and ``residual_saturation``) must be values.
PROMOTABLE: dict[str, tuple[str, ...]] = {
    "EffectiveSaturation": ("max_fraction",),
    "BrooksCoreyCapillaryPressure": ("threshold_pressure", "exponent"),
    "VanGenuchtenCapillaryPressure": ("a", "m"),
    "AdvectiveStress": ("coefficient",),
}
COUPLABLE.update(PROMOTABLE)


@register
class EffectiveSaturation(ScalarOptions):
    """``effective_saturation = (fluid_fraction / max_fraction - residual_saturation) /
    (1 - residual_saturation)``; both parameters are required."""

    type_name = "EffectiveSaturation"
    inputs_spec = (("fluid_fraction", "fluid_fraction", SCALAR),)
    outputs_spec = (("effective_saturation", "effective_saturation", SCALAR),)
    params_spec = (("residual_saturation", None), ("max_fraction", None))

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        phi = x["fluid_fraction"]
        Sr, phi_max = p["residual_saturation"], p["max_fraction"]
        rest = 1.0 - Sr
        S = (phi / phi_max - Sr) / rest
        out = {"effective_saturation": S}
        if not derivatives:
            return out, {}, {}
        jac = {"effective_saturation": {"fluid_fraction": (1.0 / (phi_max * rest)).expand_as(phi)}}
        pjac = {
            "effective_saturation": {
                "residual_saturation": (phi / phi_max - 1.0) / (rest * rest),
                "max_fraction": -phi / (phi_max * phi_max * rest),
            }
        }
        return out, jac, pjac


class _CapillaryPressure(ScalarOptions):
    """``capillary_pressure`` of ``effective_saturation`` by a correlation ``g(S; q)``
    (:meth:`correlation`), with NEML2's logarithmic extension below
    ``transition_saturation`` where ``log_extension`` (default false) is set."""

    inputs_spec = (("effective_saturation", "effective_saturation", SCALAR),)
    outputs_spec = (("capillary_pressure", "capillary_pressure", SCALAR),)
    #: NEML2's options besides the variables and the parameters
    settings = frozenset({"log_extension", "transition_saturation"})
    log_extension: bool = False
    transition_saturation: float = 0.0

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.options = cls.options | cls.settings

    def configure(self, section: Section | None) -> None:
        super().configure(section)
        if section is None:
            return
        self.log_extension = section.boolean("log_extension", False)
        self.transition_saturation = section.number("transition_saturation", 0.0)
        Sp = self.transition_saturation
        if not 0.0 <= Sp <= 1.0:
            raise section.error(
                "transition_saturation",
                f"parameter 'transition_saturation': expected a saturation in [0, 1], got {Sp:g}",
            )
        if self.log_extension and Sp <= 0.0:
            raise section.error(
                "log_extension",
                "parameter 'log_extension': the logarithmic extension needs a positive "
                "'transition_saturation' (the saturation below which it applies)",
            )

    def correlation(
        self, S: torch.Tensor, p: Mapping[str, torch.Tensor]
    ) -> tuple[torch.Tensor, torch.Tensor, dict[str, torch.Tensor], dict[str, torch.Tensor]]:
        """``g``, ``dg/dS``, ``dg/dq`` and ``d(dg/dS)/dq`` per parameter ``q``, at ``S``."""
        raise NotImplementedError

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        S = x["effective_saturation"]
        g, dg, gq, _dgq = self.correlation(S, p)
        if not self.log_extension:
            out = {"capillary_pressure": g}
            return (
                out,
                {"capillary_pressure": {"effective_saturation": dg}},
                {"capillary_pressure": gq},
            )
        Sp = torch.full_like(S, self.transition_saturation)
        h, dh, hq, dhq = self.correlation(Sp, p)
        # log10 Pc is linear in S below Sp: Pc = h exp(k (S - Sp)), k = h'/h
        k = dh / h
        shift = S - self.transition_saturation
        ext = h * torch.exp(k * shift)
        below = self.transition_saturation > S
        out = {"capillary_pressure": torch.where(below, ext, g)}
        if not derivatives:
            return out, {}, {}
        jac = {"capillary_pressure": {"effective_saturation": torch.where(below, k * ext, dg)}}
        pjac = {}
        for q in gq:
            dk = dhq[q] / h - k * hq[q] / h
            dext = ext * (hq[q] / h + dk * shift)
            pjac[q] = torch.where(below, dext, gq[q])
        return out, jac, {"capillary_pressure": pjac}


@register
class BrooksCoreyCapillaryPressure(_CapillaryPressure):
    """Brooks-Corey: ``capillary_pressure = threshold_pressure S^(-1/exponent)``."""

    type_name = "BrooksCoreyCapillaryPressure"
    params_spec = (("threshold_pressure", None), ("exponent", None))

    def correlation(
        self, S: torch.Tensor, p: Mapping[str, torch.Tensor]
    ) -> tuple[torch.Tensor, torch.Tensor, dict[str, torch.Tensor], dict[str, torch.Tensor]]:
        Pt, n = p["threshold_pressure"], p["exponent"]
        power = S ** (-1.0 / n)
        g = Pt * power
        dg = -Pt / n * S ** (-1.0 / n - 1.0)
        log_s = torch.log(S)
        gq = {"threshold_pressure": power, "exponent": g * log_s / (n * n)}
        # dg/dS = -g / (n S)
        dgq = {
            "threshold_pressure": -power / (n * S),
            "exponent": dg * (log_s / n - 1.0) / n,
        }
        return g, dg, gq, dgq


@register
class VanGenuchtenCapillaryPressure(_CapillaryPressure):
    """van Genuchten: ``capillary_pressure = a (S^(-1/m) - 1)^(1 - m)``, ``S`` held at
    ``1 - eps`` where it exceeds it (NEML2's clamp, value and derivative taken there)."""

    type_name = "VanGenuchtenCapillaryPressure"
    params_spec = (("a", None), ("m", None))

    def correlation(
        self, S: torch.Tensor, p: Mapping[str, torch.Tensor]
    ) -> tuple[torch.Tensor, torch.Tensor, dict[str, torch.Tensor], dict[str, torch.Tensor]]:
        a, m = p["a"], p["m"]
        top = 1.0 - torch.finfo(S.dtype).eps
        S = torch.where(top < S, torch.full_like(S, top), S)
        power = S ** (-1.0 / m)
        B = power - 1.0
        log_s = torch.log(S)
        Bm = power * log_s / (m * m)  # dB/dm
        g = a * B ** (1.0 - m)
        # dg/dS = c(m) a B^(-m) S^(-1/m - 1), c = -(1 - m) / m = 1 - 1/m
        c = 1.0 - 1.0 / m
        tail = B ** (-m) * S ** (-1.0 / m - 1.0)
        dg = c * a * tail
        dlog_g = -torch.log(B) + (1.0 - m) * Bm / B
        dlog_tail = -torch.log(B) - m * Bm / B + log_s / (m * m)
        gq = {"a": B ** (1.0 - m), "m": g * dlog_g}
        dgq = {"a": c * tail, "m": a * tail * (1.0 / (m * m) + c * dlog_tail)}
        return g, dg, gq, dgq


class _Permeability(ScalarOptions):
    """``permeability`` of ``porosity``; every parameter required, none promotable."""

    inputs_spec = (("porosity", "porosity", SCALAR),)
    outputs_spec = (("permeability", "permeability", SCALAR),)


@register
class PowerLawPermeability(_Permeability):
    """``permeability = reference_permeability (porosity / reference_porosity)^exponent``."""

    type_name = "PowerLawPermeability"
    params_spec = (
        ("reference_permeability", None),
        ("reference_porosity", None),
        ("exponent", None),
    )

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        phi = x["porosity"]
        K0, phi0, n = p["reference_permeability"], p["reference_porosity"], p["exponent"]
        ratio = phi / phi0
        power = ratio**n
        K = K0 * power
        out = {"permeability": K}
        if not derivatives:
            return out, {}, {}
        jac = {"permeability": {"porosity": K0 * n * ratio ** (n - 1.0) / phi0}}
        pjac = {
            "permeability": {
                "reference_permeability": power,
                "reference_porosity": -n * K / phi0,
                "exponent": K * torch.log(ratio),
            }
        }
        return out, jac, pjac


@register
class ExponentialLawPermeability(_Permeability):
    """``permeability = reference_permeability exp(scale (reference_porosity -
    porosity))``."""

    type_name = "ExponentialLawPermeability"
    params_spec = (
        ("reference_permeability", None),
        ("reference_porosity", None),
        ("scale", None),
    )

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        phi = x["porosity"]
        K0, phi0, a = p["reference_permeability"], p["reference_porosity"], p["scale"]
        change = phi - phi0
        factor = torch.exp(-a * change)
        K = K0 * factor
        out = {"permeability": K}
        if not derivatives:
            return out, {}, {}
        jac = {"permeability": {"porosity": -a * K}}
        pjac = {
            "permeability": {
                "reference_permeability": factor,
                "reference_porosity": a * K,
                "scale": -change * K,
            }
        }
        return out, jac, pjac


@register
class KozenyCarmanPermeability(_Permeability):
    """``permeability = reference_permeability (phi / (1 - phi))^n / (phi0 / (1 -
    phi0))^m``, ``phi`` the porosity and ``phi0`` the ``reference_porosity`` (NEML2's
    form of ``K0 phi^n (1 - phi0)^m / (phi0^m (1 - phi)^n)``)."""

    type_name = "KozenyCarmanPermeability"
    params_spec = (
        ("reference_permeability", None),
        ("reference_porosity", None),
        ("n", None),
        ("m", None),
    )

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        phi = x["porosity"]
        K0, phi0 = p["reference_permeability"], p["reference_porosity"]
        n, m = p["n"], p["m"]
        ratio, ratio0 = phi / (1.0 - phi), phi0 / (1.0 - phi0)
        reference = ratio0**m
        K = K0 * ratio**n / reference
        out = {"permeability": K}
        if not derivatives:
            return out, {}, {}
        rest = 1.0 - phi
        dK = K0 / reference * n * ratio ** (n - 1.0) / (rest * rest)
        jac = {"permeability": {"porosity": dK}}
        pjac = {
            "permeability": {
                "reference_permeability": ratio**n / reference,
                "reference_porosity": -m * K / (phi0 * (1.0 - phi0)),
                "n": K * torch.log(ratio),
                "m": -K * torch.log(ratio0),
            }
        }
        return out, jac, pjac


@register
class AdvectiveStress(ScalarOptions):
    """``advective_stress = -coefficient / (3 js^(5/3) jt^(2/3)) P : F`` of the
    ``pk1_stress`` ``P`` and the ``deformation_gradient`` ``F`` (both R2); the swelling
    and thermal Jacobians ``js`` and ``jt`` are inputs only where named (1 otherwise)."""

    type_name = "AdvectiveStress"
    inputs_spec = (
        ("js", None, SCALAR),
        ("jt", None, SCALAR),
        ("deformation_gradient", "deformation_gradient", R2),
        ("pk1_stress", "pk1_stress", R2),
    )
    outputs_spec = (("advective_stress", "advective_stress", SCALAR),)
    params_spec = (("coefficient", None),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        F, P = x["deformation_gradient"], x["pk1_stress"]
        js, jt = x.get("js"), x.get("jt")
        c = p["coefficient"]
        one = torch.ones_like(F[..., 0, 0])
        ws = one if js is None else js ** (-5.0 / 3.0)
        wt = one if jt is None else jt ** (-2.0 / 3.0)
        q = (P * F).sum((-2, -1))
        unit = -ws * wt / 3.0 * q  # d(advective_stress)/d(coefficient)
        out = {"advective_stress": c * unit}
        if not derivatives:
            return out, {}, {}
        s = (-c / 3.0 * ws * wt)[..., None, None]
        row = {"deformation_gradient": s * P, "pk1_stress": s * F}
        if js is not None:
            row["js"] = (5.0 / 9.0) * c * js ** (-8.0 / 3.0) * wt * q
        if jt is not None:
            row["jt"] = (2.0 / 9.0) * c * ws * jt ** (-5.0 / 3.0) * q
        return out, {"advective_stress": row}, {"advective_stress": {"coefficient": unit}}
