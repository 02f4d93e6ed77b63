"""Hardening rules in rate form, with NEML2's type names, options and defaults.

Each block maps internal variables to their rates, to be integrated in time
(``*BackwardEulerTimeIntegration``) and solved by ``ImplicitUpdate``. The output of
each is named ``<variable>_rate`` after its hardening variable unless the option of that
name (``back_stress_rate``, ``isotropic_hardening_rate``) names it. Norms of back
stresses are regularised as NEML2 regularises them, ``|X| = sqrt(X:X + eps)`` with
``eps`` the machine epsilon, so that the rules and their derivatives are finite at
``X = 0``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import torch

from ..hit import Section
from .base import Blocks, Tensors
from .block import SCALAR, SR2, Block, outer
from .registry import register


def regularised_norm(X: torch.Tensor) -> torch.Tensor:
    """``sqrt(X:X + eps)`` of a batch of Mandel vectors, ``eps`` the machine epsilon."""
    return torch.sqrt(X.square().sum(-1) + torch.finfo(X.dtype).eps)


def eye6(like: torch.Tensor) -> torch.Tensor:
    """The 6 x 6 identity, built by factory ops (exportable inside a Newton loop)."""
    return torch.eye(6, dtype=like.dtype).to(like.device)


class _RateOf(Block):
    """A rule whose output defaults to ``<variable>_rate``: ``rate_of`` names the key of
    the hardening variable and ``rate_key`` the key of its rate."""

    rate_of: ClassVar[str]
    rate_key: ClassVar[str]

    @classmethod
    def default_names(cls, section: Section) -> dict[str, str]:
        names = super().default_names(section)
        names.setdefault(cls.rate_key, f"{names[cls.rate_of]}_rate")
        return names


@register
class ChabochePlasticHardening(_RateOf):
    """``back_stress_rate = (2/3 C flow_direction - g X) flow_rate - A |X|^(a-1) X``:
    Frederick-Armstrong kinematic hardening with dynamic recovery plus power-law static
    recovery (``X`` the back stress)."""

    type_name = "ChabochePlasticHardening"
    inputs_spec = (
        ("flow_rate", "flow_rate", SCALAR),
        ("flow_direction", "flow_direction", SR2),
        ("back_stress", "back_stress", SR2),
    )
    outputs_spec = (("back_stress_rate", None, SR2),)
    params_spec = (("C", None), ("g", None), ("A", None), ("a", None))
    rate_of = "back_stress"
    rate_key = "back_stress_rate"

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        gamma, N, X = x["flow_rate"], x["flow_direction"], x["back_stress"]
        C, g, A, a = p["C"], p["g"], p["A"], p["a"]
        s = regularised_norm(X)
        recovery = A * s ** (a - 1)
        term = 2.0 / 3.0 * C * N - g * X
        rate = term * gamma.unsqueeze(-1) - recovery.unsqueeze(-1) * X
        out = {"back_stress_rate": rate}
        if not derivatives:
            return out, {}, {}
        eye = eye6(X)
        d_X = -(g * gamma + recovery).reshape(-1, 1, 1) * eye - (
            A * (a - 1) * s ** (a - 3)
        ).reshape(-1, 1, 1) * outer(X, X)
        jac = {
            "back_stress_rate": {
                "flow_rate": term,
                "flow_direction": (2.0 / 3.0 * C * gamma).reshape(-1, 1, 1) * eye,
                "back_stress": d_X,
            }
        }
        pjac = {
            "back_stress_rate": {
                "C": 2.0 / 3.0 * N * gamma.unsqueeze(-1),
                "g": -X * gamma.unsqueeze(-1),
                "A": -(s ** (a - 1)).unsqueeze(-1) * X,
                "a": -(recovery * torch.log(s)).unsqueeze(-1) * X,
            }
        }
        return out, jac, pjac


@register
class SlopeSaturationVoceIsotropicHardening(_RateOf):
    """``isotropic_hardening_rate = sign(R) theta0 (1 - h / R) flow_rate`` with ``R`` the
    ``saturated_hardening`` and ``theta0`` the ``initial_hardening_rate``: Voce hardening
    written as a rate of the hardening ``h`` itself."""

    type_name = "SlopeSaturationVoceIsotropicHardening"
    inputs_spec = (
        ("flow_rate", "flow_rate", SCALAR),
        ("isotropic_hardening", "isotropic_hardening", SCALAR),
    )
    outputs_spec = (("isotropic_hardening_rate", None, SCALAR),)
    params_spec = (("saturated_hardening", None), ("initial_hardening_rate", None))
    rate_of = "isotropic_hardening"
    rate_key = "isotropic_hardening_rate"

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        gamma, h = x["flow_rate"], x["isotropic_hardening"]
        R, theta0 = p["saturated_hardening"], p["initial_hardening_rate"]
        sign = torch.sign(R)
        slope = sign * theta0 * (1 - h / R)
        out = {"isotropic_hardening_rate": slope * gamma}
        jac = {
            "isotropic_hardening_rate": {
                "flow_rate": slope,
                "isotropic_hardening": -sign * theta0 / R * gamma,
            }
        }
        pjac = {
            "isotropic_hardening_rate": {
                "saturated_hardening": sign * theta0 * h / (R * R) * gamma,
                "initial_hardening_rate": sign * (1 - h / R) * gamma,
            }
        }
        return out, jac, pjac


@register
class PowerLawIsotropicHardeningStaticRecovery(_RateOf):
    """``isotropic_hardening_rate = -(|h| / tau)^(n-1) h / tau``: static recovery of the
    isotropic hardening ``h`` (``tau`` the recovery rate, ``n`` the exponent)."""

    type_name = "PowerLawIsotropicHardeningStaticRecovery"
    inputs_spec = (("isotropic_hardening", "isotropic_hardening", SCALAR),)
    outputs_spec = (("isotropic_hardening_rate", None, SCALAR),)
    params_spec = (("tau", None), ("n", None))
    rate_of = "isotropic_hardening"
    rate_key = "isotropic_hardening_rate"

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        h = x["isotropic_hardening"]
        tau, n = p["tau"], p["n"]
        scaled = (h.abs() / tau) ** (n - 1)
        rate = -scaled * h / tau
        out = {"isotropic_hardening_rate": rate}
        # d|h|^(n-1) h / d n carries log|h|, which times |h|^(n-1) h vanishes at h = 0
        nonzero = h != 0
        safe = torch.where(nonzero, h.abs(), torch.ones_like(h))
        d_n = torch.where(nonzero, rate * torch.log(safe / tau), torch.zeros_like(h))
        jac = {"isotropic_hardening_rate": {"isotropic_hardening": -n * scaled / tau}}
        pjac = {"isotropic_hardening_rate": {"tau": -n * rate / tau, "n": d_n}}
        return out, jac, pjac


@register
class PowerLawKinematicHardeningStaticRecovery(_RateOf):
    """``back_stress_rate = -(|X| / tau)^(n-1) X / tau``: static recovery of the back
    stress ``X`` (``tau`` the recovery rate, ``n`` the exponent)."""

    type_name = "PowerLawKinematicHardeningStaticRecovery"
    inputs_spec = (("back_stress", "back_stress", SR2),)
    outputs_spec = (("back_stress_rate", None, SR2),)
    params_spec = (("tau", None), ("n", None))
    rate_of = "back_stress"
    rate_key = "back_stress_rate"

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        X = x["back_stress"]
        tau, n = p["tau"], p["n"]
        s = regularised_norm(X)
        factor = (s / tau) ** (n - 1) / tau
        rate = -factor.unsqueeze(-1) * X
        out = {"back_stress_rate": rate}
        if not derivatives:
            return out, {}, {}
        d_X = -factor.reshape(-1, 1, 1) * eye6(X) - ((n - 1) * factor / (s * s)).reshape(
            -1, 1, 1
        ) * outer(X, X)
        jac = {"back_stress_rate": {"back_stress": d_X}}
        pjac = {
            "back_stress_rate": {
                "tau": -n / tau * rate,
                "n": rate * torch.log(s / tau).unsqueeze(-1),
            }
        }
        return out, jac, pjac
