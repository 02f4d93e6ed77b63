"""Cohesive zones, the mixed-mode separations that feed the traction laws: the mode mixity
of a separation, the Camanho-Davila critical separation, and the full separation by the
Benzeggagh-Kenane and the power law criteria. The traction laws and the family's overview
are in :mod:`.cohesive`."""

from __future__ import annotations

from collections.abc import Mapping

import torch

from .base import Blocks, Tensors
from .block import SCALAR, Block
from .cohesive import eps_of
from .registry import register

__all__ = [
    "BenzeggaghKenaneFullSeparation",
    "CamanhoDavilaCriticalSeparation",
    "ModeMixity",
    "PowerLawFullSeparation",
]


@register
class ModeMixity(Block):
    """``mode_mixity = ds / dn`` where the interface opens (``dn > 0``), else 0."""

    type_name = "ModeMixity"
    inputs_spec = (
        ("normal_separation", "normal_separation", SCALAR),
        ("tangential_separation", "tangential_separation", SCALAR),
    )
    outputs_spec = (("mode_mixity", "mode_mixity", SCALAR),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        dn, ds = x["normal_separation"], x["tangential_separation"]
        opening = dn > 0
        zero = torch.zeros_like(dn)
        inverse = 1.0 / torch.where(opening, dn, torch.ones_like(dn))
        out = {"mode_mixity": torch.where(opening, ds * inverse, zero)}
        jac = {
            "mode_mixity": {
                "tangential_separation": torch.where(opening, inverse, zero),
                "normal_separation": torch.where(opening, -ds * inverse * inverse, zero),
            }
        }
        return out, jac, {}


#: The options of the mixed-mode separations: mode mixity (beta), penalty stiffness (K).
_MIXED = (("mode_mixity", None), ("penalty_stiffness", None))


@register
class CamanhoDavilaCriticalSeparation(Block):
    """Camanho and Davila's mixed-mode damage onset separation.

    With ``n0 = N / K``, ``s0 = S / K`` and ``m = sqrt(s0^2 + beta^2 n0^2 + eps)``:
    ``critical_separation = n0 s0 sqrt(1 + beta^2) / m`` where ``normal_separation > 0``,
    else ``s0``. Parameters (all required): ``mode_mixity`` (beta),
    ``penalty_stiffness`` (K), ``normal_strength`` (N), ``shear_strength`` (S).
    """

    type_name = "CamanhoDavilaCriticalSeparation"
    inputs_spec = (("normal_separation", "normal_separation", SCALAR),)
    outputs_spec = (("critical_separation", "critical_separation", SCALAR),)
    params_spec = (*_MIXED, ("normal_strength", None), ("shear_strength", None))

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        dn = x["normal_separation"]
        beta, k = p["mode_mixity"], p["penalty_stiffness"]
        n, s = p["normal_strength"], p["shear_strength"]
        opening = dn > 0
        n0, s0 = n / k, s / k
        root = torch.sqrt(1.0 + beta * beta)
        m2 = s0 * s0 + beta * beta * n0 * n0 + eps_of(dn)
        m = torch.sqrt(m2)
        mixed = n0 * s0 * root / m
        out = {"critical_separation": torch.where(opening, mixed, s0)}
        if not derivatives:
            return out, {}, {}
        zero = torch.zeros_like(dn)
        d_n0 = s0 * root / m - mixed * beta * beta * n0 / m2
        d_s0 = n0 * root / m - mixed * s0 / m2
        pick = {
            "mode_mixity": (mixed * beta * (1.0 / (1.0 + beta * beta) - n0 * n0 / m2), 0.0),
            "normal_strength": (d_n0 / k, 0.0),
            "shear_strength": (d_s0 / k, 1.0 / k),
            "penalty_stiffness": (-(d_n0 * n0 + d_s0 * s0) / k, -s0 / k),
        }
        pjac = {
            "critical_separation": {
                q: torch.where(opening, zero + a, zero + b) for q, (a, b) in pick.items()
            }
        }
        return out, {}, pjac


class _FullSeparation(Block):
    """A mixed-mode full separation: the law's value where ``normal_separation > 0``,
    else ``2 G_IIc / S`` (pure shear)."""

    inputs_spec = (("normal_separation", "normal_separation", SCALAR),)
    outputs_spec = (("full_separation", "full_separation", SCALAR),)
    params_spec = (
        *_MIXED,
        ("critical_separation", None),
        ("mode_I_fracture_toughness", None),
        ("mode_II_fracture_toughness", None),
        ("shear_strength", None),
        ("eta", None),
    )

    def opening(self, p: Mapping[str, torch.Tensor], eps: float) -> dict[str, torch.Tensor]:
        """The value (key ``value``) and its derivative in each parameter of the law,
        where the interface opens (subclasses)."""
        raise NotImplementedError

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        dn = x["normal_separation"]
        g2, s = p["mode_II_fracture_toughness"], p["shear_strength"]
        is_open = dn > 0
        law = self.opening(p, eps_of(dn))
        out = {"full_separation": torch.where(is_open, law.pop("value"), 2.0 * g2 / s)}
        if not derivatives:
            return out, {}, {}
        zero = torch.zeros_like(dn)
        shear = {"mode_II_fracture_toughness": 2.0 / s, "shear_strength": -2.0 * g2 / (s * s)}
        pjac = {
            "full_separation": {
                q: torch.where(is_open, zero + law.get(q, 0.0), zero + shear.get(q, 0.0))
                for q, _ in self.params_spec
            }
        }
        return out, {}, pjac


@register
class BenzeggaghKenaneFullSeparation(_FullSeparation):
    """The Benzeggagh-Kenane criterion: where the interface opens,
    ``full_separation = 2 / (K dc) (G_Ic + (G_IIc - G_Ic) (beta^2 / (1 + beta^2) + eps)^eta)``.

    Parameters (all required): ``mode_mixity`` (beta), ``critical_separation`` (dc),
    ``penalty_stiffness`` (K), ``mode_I_fracture_toughness``,
    ``mode_II_fracture_toughness``, ``shear_strength`` (S) and ``eta``.
    """

    type_name = "BenzeggaghKenaneFullSeparation"

    def opening(self, p: Mapping[str, torch.Tensor], eps: float) -> dict[str, torch.Tensor]:
        beta, k, dc = p["mode_mixity"], p["penalty_stiffness"], p["critical_separation"]
        g1, g2, eta = p["mode_I_fracture_toughness"], p["mode_II_fracture_toughness"], p["eta"]
        b2 = beta * beta
        base = b2 / (1.0 + b2) + eps
        power = base**eta
        front = 2.0 / (k * dc)
        value = front * (g1 + (g2 - g1) * power)
        return {
            "value": value,
            "mode_mixity": front
            * (g2 - g1)
            * eta
            * base ** (eta - 1.0)
            * 2.0
            * beta
            / ((1.0 + b2) * (1.0 + b2)),
            "critical_separation": -value / dc,
            "penalty_stiffness": -value / k,
            "mode_I_fracture_toughness": front * (1.0 - power),
            "mode_II_fracture_toughness": front * power,
            "eta": front * (g2 - g1) * power * torch.log(base),
        }


@register
class PowerLawFullSeparation(_FullSeparation):
    """The power-law criterion: where the interface opens, ``full_separation =
    2 (1 + beta^2) / (K dc) ((1 / G_Ic)^eta + (beta^2 / G_IIc + eps)^eta)^(-1/eta)``.

    Parameters as for ``BenzeggaghKenaneFullSeparation``.
    """

    type_name = "PowerLawFullSeparation"

    def opening(self, p: Mapping[str, torch.Tensor], eps: float) -> dict[str, torch.Tensor]:
        beta, k, dc = p["mode_mixity"], p["penalty_stiffness"], p["critical_separation"]
        g1, g2, eta = p["mode_I_fracture_toughness"], p["mode_II_fracture_toughness"], p["eta"]
        b2 = beta * beta
        q = b2 / g2 + eps
        a, b = (1.0 / g1) ** eta, q**eta
        total = a + b
        mixed = total ** (-1.0 / eta)
        front = (2.0 + 2.0 * b2) / (k * dc)
        value = front * mixed
        # d(value)/d(total) = -value / (eta total)
        d_total = -value / (eta * total)
        return {
            "value": value,
            "mode_mixity": 4.0 * beta / (k * dc) * mixed
            + d_total * eta * q ** (eta - 1.0) * 2.0 * beta / g2,
            "critical_separation": -value / dc,
            "penalty_stiffness": -value / k,
            "mode_I_fracture_toughness": d_total * (-eta * a / g1),
            "mode_II_fracture_toughness": d_total * (-eta * q ** (eta - 1.0) * b2 / (g2 * g2)),
            "eta": value
            * (
                torch.log(total) / (eta * eta)
                - (a * torch.log(1.0 / g1) + b * torch.log(q)) / (eta * total)
            ),
        }
