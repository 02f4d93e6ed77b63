"""Porous plasticity: the Gurson-Tvergaard-Needleman yield function, the void growth it
drives and the Olevsky sintering stress, with NEML2's type names, options and defaults.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from .base import Blocks, Tensors
from .block import SCALAR, SR2, Block, identity
from .registry import register


@register
class GTNYieldFunction(Block):
    """``yield_function = (se / sf)^2 + 2 q1 phi cosh(q2 sp / (2 sf)) - (1 + q3 phi^2)``
    with ``se`` the ``flow_invariant`` (a von Mises stress), ``sp`` the ``poro_invariant``
    (``3 sigma_h`` less a sintering stress, say), ``phi`` the ``void_fraction`` and
    ``sf = yield_stress + isotropic_hardening`` (the hardening only where its key is
    given)."""

    type_name = "GTNYieldFunction"
    inputs_spec = (
        ("flow_invariant", "flow_invariant", SCALAR),
        ("poro_invariant", "poro_invariant", SCALAR),
        ("void_fraction", "void_fraction", SCALAR),
        ("isotropic_hardening", None, SCALAR),
    )
    outputs_spec = (("yield_function", "yield_function", SCALAR),)
    params_spec = (("yield_stress", None), ("q1", None), ("q2", None), ("q3", None))

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        se, sp, phi = x["flow_invariant"], x["poro_invariant"], x["void_fraction"]
        q1, q2, q3 = p["q1"], p["q2"], p["q3"]
        sf = p["yield_stress"] + x["isotropic_hardening"] if "isotropic_hardening" in x else None
        if sf is None:
            sf = p["yield_stress"] * torch.ones_like(se)
        arg = q2 / 2 * sp / sf
        cosh, sinh = torch.cosh(arg), torch.sinh(arg)
        f = (se / sf) ** 2 + 2 * q1 * phi * cosh - (1 + q3 * phi**2)
        d_sf = -2 * se**2 / sf**3 - q1 * phi * q2 * sp / sf**2 * sinh
        jac = {
            "flow_invariant": 2 * se / sf**2,
            "poro_invariant": q1 * phi * q2 / sf * sinh,
            "void_fraction": 2 * q1 * cosh - 2 * q3 * phi,
        }
        if "isotropic_hardening" in x:
            jac["isotropic_hardening"] = d_sf
        pjac = {
            "yield_stress": d_sf,
            "q1": 2 * phi * cosh,
            "q2": q1 * phi * sp / sf * sinh,
            "q3": -(phi**2),
        }
        return {"yield_function": f}, {"yield_function": jac}, {"yield_function": pjac}

    def compute_second(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]
    ) -> dict[str, dict[tuple[str, str], torch.Tensor]]:
        """With ``a = q2 sp / (2 sf)``, ``C = cosh a``, ``S = sinh a``: ``sf`` enters through
        ``yield_stress`` and ``isotropic_hardening`` alike, so both share its derivatives."""
        se, sp, phi = x["flow_invariant"], x["poro_invariant"], x["void_fraction"]
        q1, q2, q3 = p["q1"], p["q2"], p["q3"]
        sf = p["yield_stress"] + x.get("isotropic_hardening", torch.zeros_like(se))
        a = q2 / 2 * sp / sf
        cosh, sinh = torch.cosh(a), torch.sinh(a)
        mixed = sinh + a * cosh  # d(a sinh a)/da
        d2: dict[tuple[str, str], torch.Tensor] = {
            ("flow_invariant", "flow_invariant"): 2 / sf**2,
            ("poro_invariant", "poro_invariant"): q1 * phi * q2**2 * cosh / (2 * sf**2),
            ("poro_invariant", "void_fraction"): q1 * q2 * sinh / sf,
            ("poro_invariant", "q1"): phi * q2 * sinh / sf,
            ("poro_invariant", "q2"): q1 * phi * mixed / sf,
            ("void_fraction", "void_fraction"): -2 * q3 * torch.ones_like(phi),
            ("void_fraction", "q1"): 2 * cosh,
            ("void_fraction", "q2"): q1 * sp * sinh / sf,
            ("void_fraction", "q3"): -2 * phi,
            ("q1", "q2"): phi * sp * sinh / sf,
            ("q2", "q2"): q1 * phi * sp**2 * cosh / (2 * sf**2),
        }
        # the derivatives by sf, for each key through which sf enters
        by_sf = {
            "flow_invariant": -4 * se / sf**3,
            "poro_invariant": -q1 * phi * q2 * mixed / sf**2,
            "void_fraction": -2 * q1 * a * sinh / sf,
            "q1": -2 * phi * a * sinh / sf,
            "q2": -q1 * phi * sp * mixed / sf**2,
        }
        sf_sf = 6 * se**2 / sf**4 + 2 * q1 * phi * a * (2 * sinh + a * cosh) / sf**2
        keys = ["yield_stress"] + (["isotropic_hardening"] if "isotropic_hardening" in x else [])
        for i, key in enumerate(keys):
            for other, block in by_sf.items():
                d2[(other, key)] = block
            for second in keys[i:]:
                d2[(key, second)] = sf_sf
        return {"yield_function": d2}


@register
class GursonCavitation(Block):
    """``void_fraction_rate = (1 - phi) tr(plastic_strain_rate)``: the mass balance of
    the voids (``phi`` the ``void_fraction``) under plastic dilatation."""

    type_name = "GursonCavitation"
    inputs_spec = (
        ("plastic_strain_rate", "plastic_strain_rate", SR2),
        ("void_fraction", "void_fraction", SCALAR),
    )
    outputs_spec = (("void_fraction_rate", "void_fraction_rate", SCALAR),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        rate, phi = x["plastic_strain_rate"], x["void_fraction"]
        trace = rate[:, 0] + rate[:, 1] + rate[:, 2]
        jac = {
            "plastic_strain_rate": (1 - phi).unsqueeze(-1) * identity(rate),
            "void_fraction": -trace,
        }
        return {"void_fraction_rate": (1 - phi) * trace}, {"void_fraction_rate": jac}, {}


@register
class OlevskySinteringStress(Block):
    """``sintering_stress = 3 surface_tension phi^2 / particle_radius`` (Olevsky-Skorohod),
    ``phi`` the ``void_fraction``."""

    type_name = "OlevskySinteringStress"
    inputs_spec = (("void_fraction", "void_fraction", SCALAR),)
    outputs_spec = (("sintering_stress", "sintering_stress", SCALAR),)
    params_spec = (("surface_tension", None), ("particle_radius", None))

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        phi = x["void_fraction"]
        gamma, r = p["surface_tension"], p["particle_radius"]
        s = 3 * gamma * phi**2 / r
        jac = {"sintering_stress": {"void_fraction": 6 * gamma * phi / r}}
        pjac = {"sintering_stress": {"surface_tension": 3 * phi**2 / r, "particle_radius": -s / r}}
        return {"sintering_stress": s}, jac, pjac
