"""Linear viscoelastic elements (small strain, Mandel 6-vectors), with NEML2 3.1.0's
type names, options, defaults and variable names.

Each element is linear in its strains, so every Jacobian block is a multiple of the
6x6 identity and every parameter block a multiple of a strain or stress. The viscous
strains are inputs and their rates outputs: a time integration (for instance
``SR2BackwardEulerTimeIntegration`` inside an ``ImplicitUpdate``) closes the model,
as in NEML2. A rate output is named ``<viscous strain>_rate`` unless the option of that
default name (``viscous_strain_rate``, ...) renames it.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from ..hit import Section
from .base import Blocks, Tensors, variable_name
from .block import SR2, Block
from .registry import register

__all__ = [
    "BurgersElement",
    "KelvinVoigtElement",
    "LinearDashpot",
    "WiechertElement",
    "ZenerElement",
]


def scaled_identity(c: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """``c I`` per point, ``(B, 6, 6)``, for a 0-d or ``(B,)`` coefficient ``c``.

    The identity comes from a factory op (an exported ``while_loop`` body, as in
    ImplicitUpdate, cannot hold a tensor constant).
    """
    eye = torch.eye(6, dtype=like.dtype).to(like.device)
    coefficient = c.expand(like.shape[0]) if c.dim() == 0 else c
    return coefficient.reshape(-1, 1, 1) * eye


class _Element(Block):
    """A viscoelastic block whose rate outputs are named after their viscous strains.

    ``rates``: (rate output key, viscous strain key); the rate's default name is the
    strain's name with ``_rate`` appended, and the option named like the key renames it.
    """

    rates: tuple[tuple[str, str], ...] = ()

    @classmethod
    def default_names(cls, section: Section) -> dict[str, str]:
        names = super().default_names(section)
        for rate, strain in cls.rates:
            names[rate] = variable_name(section, rate, f"{names[strain]}_rate")
        return names


@register
class LinearDashpot(Block):
    """``viscous_strain_rate = stress / viscosity``, a Newtonian dashpot.

    Keys: ``stress`` and ``viscous_strain_rate`` (variable names, defaults the keys) and
    ``viscosity`` (required). Parameter: ``<block>.viscosity``.
    """

    type_name = "LinearDashpot"
    inputs_spec = (("stress", "stress", SR2),)
    outputs_spec = (("viscous_strain_rate", "viscous_strain_rate", SR2),)
    params_spec = (("viscosity", None),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        s, eta = x["stress"], p["viscosity"]
        out = {"viscous_strain_rate": s / eta}
        if not derivatives:
            return out, {}, {}
        jac = {"viscous_strain_rate": {"stress": scaled_identity(1.0 / eta, s)}}
        pjac = {"viscous_strain_rate": {"viscosity": -s / (eta * eta)}}
        return out, jac, pjac


@register
class KelvinVoigtElement(_Element):
    """``stress = modulus strain + viscosity strain_rate``: spring and dashpot in parallel.

    Keys: ``strain`` and ``stress`` (variable names); the rate input is always
    ``<strain>_rate`` (NEML2 has no option for it). ``modulus`` and ``viscosity`` are
    required parameters.
    """

    type_name = "KelvinVoigtElement"
    inputs_spec = (("strain", "strain", SR2), ("strain_rate", None, SR2))
    outputs_spec = (("stress", "stress", SR2),)
    params_spec = (("modulus", None), ("viscosity", None))
    options = frozenset({"strain", "stress", "modulus", "viscosity"})

    @classmethod
    def default_names(cls, section: Section) -> dict[str, str]:
        names = super().default_names(section)
        names["strain_rate"] = f"{names['strain']}_rate"
        return names

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        e, rate = x["strain"], x["strain_rate"]
        k, eta = p["modulus"], p["viscosity"]
        out = {"stress": k * e + eta * rate}
        if not derivatives:
            return out, {}, {}
        jac = {"stress": {"strain": scaled_identity(k, e), "strain_rate": scaled_identity(eta, e)}}
        pjac = {"stress": {"modulus": e, "viscosity": rate}}
        return out, jac, pjac


@register
class ZenerElement(_Element):
    """The standard linear solid: an equilibrium spring beside a Maxwell branch.

    ``stress = E_inf strain + E_M (strain - viscous_strain)`` and
    ``viscous_strain_rate = E_M (strain - viscous_strain) / eta_M``. Keys: ``strain``,
    ``viscous_strain``, ``stress``, ``viscous_strain_rate`` (default
    ``<viscous_strain>_rate``); required parameters ``equilibrium_modulus``,
    ``maxwell_modulus`` and ``maxwell_viscosity``.
    """

    type_name = "ZenerElement"
    inputs_spec = (("strain", "strain", SR2), ("viscous_strain", "viscous_strain", SR2))
    outputs_spec = (("stress", "stress", SR2), ("viscous_strain_rate", None, SR2))
    params_spec = (
        ("equilibrium_modulus", None),
        ("maxwell_modulus", None),
        ("maxwell_viscosity", None),
    )
    rates = (("viscous_strain_rate", "viscous_strain"),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        e, ev = x["strain"], x["viscous_strain"]
        e_inf, e_m, eta = p["equilibrium_modulus"], p["maxwell_modulus"], p["maxwell_viscosity"]
        branch = e - ev
        s_m = e_m * branch
        out = {"stress": e_inf * e + s_m, "viscous_strain_rate": s_m / eta}
        if not derivatives:
            return out, {}, {}
        jac = {
            "stress": {
                "strain": scaled_identity(e_inf + e_m, e),
                "viscous_strain": scaled_identity(-e_m, e),
            },
            "viscous_strain_rate": {
                "strain": scaled_identity(e_m / eta, e),
                "viscous_strain": scaled_identity(-e_m / eta, e),
            },
        }
        pjac = {
            "stress": {"equilibrium_modulus": e, "maxwell_modulus": branch},
            "viscous_strain_rate": {
                "maxwell_modulus": branch / eta,
                "maxwell_viscosity": -s_m / (eta * eta),
            },
        }
        return out, jac, pjac


@register
class BurgersElement(_Element):
    """A Maxwell element in series with a Kelvin-Voigt element, one shared stress.

    ``stress = E_M (strain - maxwell_viscous_strain - kelvin_voigt_strain)``,
    ``maxwell_viscous_strain_rate = stress / eta_M`` and
    ``kelvin_voigt_strain_rate = (stress - E_K kelvin_voigt_strain) / eta_K``. The rate
    outputs default to ``<strain name>_rate``; required parameters ``maxwell_modulus``,
    ``maxwell_viscosity``, ``kelvin_modulus`` and ``kelvin_viscosity``.
    """

    type_name = "BurgersElement"
    inputs_spec = (
        ("strain", "strain", SR2),
        ("maxwell_viscous_strain", "maxwell_viscous_strain", SR2),
        ("kelvin_voigt_strain", "kelvin_voigt_strain", SR2),
    )
    outputs_spec = (
        ("stress", "stress", SR2),
        ("maxwell_viscous_strain_rate", None, SR2),
        ("kelvin_voigt_strain_rate", None, SR2),
    )
    params_spec = (
        ("maxwell_modulus", None),
        ("maxwell_viscosity", None),
        ("kelvin_modulus", None),
        ("kelvin_viscosity", None),
    )
    rates = (
        ("maxwell_viscous_strain_rate", "maxwell_viscous_strain"),
        ("kelvin_voigt_strain_rate", "kelvin_voigt_strain"),
    )

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        e, e_m, e_k = x["strain"], x["maxwell_viscous_strain"], x["kelvin_voigt_strain"]
        mod_m, eta_m = p["maxwell_modulus"], p["maxwell_viscosity"]
        mod_k, eta_k = p["kelvin_modulus"], p["kelvin_viscosity"]
        elastic = e - e_m - e_k
        s = mod_m * elastic
        kelvin = s - mod_k * e_k
        out = {
            "stress": s,
            "maxwell_viscous_strain_rate": s / eta_m,
            "kelvin_voigt_strain_rate": kelvin / eta_k,
        }
        if not derivatives:
            return out, {}, {}
        jac = {
            "stress": {
                "strain": scaled_identity(mod_m, e),
                "maxwell_viscous_strain": scaled_identity(-mod_m, e),
                "kelvin_voigt_strain": scaled_identity(-mod_m, e),
            },
            "maxwell_viscous_strain_rate": {
                "strain": scaled_identity(mod_m / eta_m, e),
                "maxwell_viscous_strain": scaled_identity(-mod_m / eta_m, e),
                "kelvin_voigt_strain": scaled_identity(-mod_m / eta_m, e),
            },
            "kelvin_voigt_strain_rate": {
                "strain": scaled_identity(mod_m / eta_k, e),
                "maxwell_viscous_strain": scaled_identity(-mod_m / eta_k, e),
                "kelvin_voigt_strain": scaled_identity(-(mod_m + mod_k) / eta_k, e),
            },
        }
        pjac = {
            "stress": {"maxwell_modulus": elastic},
            "maxwell_viscous_strain_rate": {
                "maxwell_modulus": elastic / eta_m,
                "maxwell_viscosity": -s / (eta_m * eta_m),
            },
            "kelvin_voigt_strain_rate": {
                "maxwell_modulus": elastic / eta_k,
                "kelvin_modulus": -e_k / eta_k,
                "kelvin_viscosity": -kelvin / (eta_k * eta_k),
            },
        }
        return out, jac, pjac


@register
class WiechertElement(_Element):
    """The generalised Maxwell model: an equilibrium spring beside two Maxwell branches.

    ``stress = E_inf strain + sum_i E_i (strain - viscous_strain_i)`` and
    ``viscous_strain_i_rate = E_i (strain - viscous_strain_i) / eta_i`` (i = 1, 2). The
    rate outputs default to ``<viscous_strain_i>_rate``; required parameters
    ``equilibrium_modulus``, ``modulus_1``, ``viscosity_1``, ``modulus_2``, ``viscosity_2``.
    """

    type_name = "WiechertElement"
    inputs_spec = (
        ("strain", "strain", SR2),
        ("viscous_strain_1", "viscous_strain_1", SR2),
        ("viscous_strain_2", "viscous_strain_2", SR2),
    )
    outputs_spec = (
        ("stress", "stress", SR2),
        ("viscous_strain_1_rate", None, SR2),
        ("viscous_strain_2_rate", None, SR2),
    )
    params_spec = (
        ("equilibrium_modulus", None),
        ("modulus_1", None),
        ("viscosity_1", None),
        ("modulus_2", None),
        ("viscosity_2", None),
    )
    rates = (
        ("viscous_strain_1_rate", "viscous_strain_1"),
        ("viscous_strain_2_rate", "viscous_strain_2"),
    )

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        e = x["strain"]
        e_inf = p["equilibrium_modulus"]
        stress = e_inf * e
        out: Tensors = {}
        jac: Blocks = {"stress": {}}
        pjac: Blocks = {"stress": {"equilibrium_modulus": e}}
        total = e_inf
        for i in ("1", "2"):
            ev, mod, eta = x[f"viscous_strain_{i}"], p[f"modulus_{i}"], p[f"viscosity_{i}"]
            branch = e - ev
            s_i = mod * branch
            stress = stress + s_i
            rate = f"viscous_strain_{i}_rate"
            out[rate] = s_i / eta
            total = total + mod
            if derivatives:
                jac["stress"][f"viscous_strain_{i}"] = scaled_identity(-mod, e)
                jac[rate] = {
                    "strain": scaled_identity(mod / eta, e),
                    f"viscous_strain_{i}": scaled_identity(-mod / eta, e),
                }
                pjac["stress"][f"modulus_{i}"] = branch
                pjac[rate] = {f"modulus_{i}": branch / eta, f"viscosity_{i}": -s_i / (eta * eta)}
        out["stress"] = stress
        if not derivatives:
            return out, {}, {}
        jac["stress"]["strain"] = scaled_identity(total, e)
        return out, jac, pjac
