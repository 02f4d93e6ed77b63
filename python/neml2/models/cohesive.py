"""Cohesive zones: traction-separation laws and the mixed-mode separations that feed them,
with NEML2 3.1.0's type names, options, defaults and variable names.

The separations are Scalars (the normal one usually the positive part of the normal
jump, its negative part the optional ``normal_penetration``) and the traction a Vec
``(T_n, T_s1, T_s2)``. The damaging laws keep their damage irreversible themselves: the
trial damage advances the previous one, ``<damage>~1``, only where it exceeds it.
Branches follow NEML2: a mask (``dn > 0``, the bilinear law's intervals) selects
values and is constant in differentiation, and the machine epsilon regularises the
mixed-mode powers and roots at zero mode mixity.

This module holds the traction laws; the mode mixity and the critical and full
separations are in :mod:`.cohesive_mixed_mode`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch

from ..hit import Section
from ..tensors import base_shape
from .base import Blocks, Tensors
from .block import SCALAR, Block
from .registry import register

__all__ = [
    "BilinearTraction",
    "OrthotropicLinearTraction",
    "SalehaniIraniTraction",
]

VEC = base_shape("Vec")
#: The separations every traction law reads, by key (default name = key).
SEPARATIONS = (
    ("normal_separation", "normal_separation", SCALAR),
    ("normal_penetration", None, SCALAR),
    ("tangential_separation_1", "tangential_separation_1", SCALAR),
    ("tangential_separation_2", "tangential_separation_2", SCALAR),
)


def vec(n: torch.Tensor, s1: torch.Tensor, s2: torch.Tensor) -> torch.Tensor:
    """Three per-point Scalars as one Vec, ``(B, 3)``."""
    return torch.stack(torch.broadcast_tensors(n, s1, s2), -1)


def separations(
    x: Mapping[str, torch.Tensor],
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """The normal and the two tangential separations, and the normal penetration where the
    model takes it (None otherwise)."""
    return (
        x["normal_separation"],
        x["tangential_separation_1"],
        x["tangential_separation_2"],
        x.get("normal_penetration"),
    )


def eps_of(like: torch.Tensor) -> float:
    """The machine epsilon of ``like``'s dtype (NEML2's regulariser)."""
    return torch.finfo(like.dtype).eps


class _Damaging(Block):
    """A traction law with irreversible damage: the input ``<damage>~1`` (always that
    name; NEML2 has no option for it) beside the outputs ``traction`` and ``damage``."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.options = cls.options - {"damage_old"}  # the input's name is fixed

    @classmethod
    def default_names(cls, section: Section) -> dict[str, str]:
        names = super().default_names(section)
        names["damage_old"] = f"{names['damage']}~1"
        return names

    @staticmethod
    def irreversible(
        trial: torch.Tensor, old: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``max(trial, old)``, where the trial advances, and d(damage)/d(old)."""
        advance = trial > old
        zero, one = torch.zeros_like(trial), torch.ones_like(trial)
        return torch.where(advance, trial, old), advance, torch.where(advance, zero, one)

    @staticmethod
    def through_damage(minus_k_jump: torch.Tensor, dd: torch.Tensor) -> torch.Tensor:
        """d(traction)/d(q) through the damage: ``-K jump dd/dq`` per component."""
        return minus_k_jump * dd.unsqueeze(-1)


@register
class BilinearTraction(_Damaging):
    """Bilinear softening: ``T = K (1 - d) (dn, ds1, ds2) + K (pen, 0, 0)``.

    The trial damage is 0 below the critical separation ``dc``, 1 from the full
    separation ``df`` on, and ``df (dm - dc) / (dm (df - dc))`` between, ``dm`` the
    ``effective_separation``; ``d = max(trial, <damage>~1)``. Parameters (all required):
    ``penalty_stiffness`` (K), ``critical_separation`` and ``full_separation`` (which
    NEML2 also lets a variable set; here they are numbers).
    """

    type_name = "BilinearTraction"
    inputs_spec = (
        ("effective_separation", "effective_separation", SCALAR),
        *SEPARATIONS,
        ("damage_old", None, SCALAR),
    )
    outputs_spec = (("traction", "traction", VEC), ("damage", "damage", SCALAR))
    params_spec = (
        ("penalty_stiffness", None),
        ("critical_separation", None),
        ("full_separation", None),
    )

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        dm, dn = x["effective_separation"], x["normal_separation"]
        ds1, ds2 = x["tangential_separation_1"], x["tangential_separation_2"]
        pen = x.get("normal_penetration")
        k, dc, df = p["penalty_stiffness"], p["critical_separation"], p["full_separation"]
        zero, one = torch.zeros_like(dm), torch.ones_like(dm)
        spread = df - dc
        # the interval's width, 1 where it is empty (no point lies inside it then)
        width = torch.where(spread > 0, spread, torch.ones_like(spread))
        softening = df * (dm - dc) / (dm * width)
        trial = torch.where(dm < dc, zero, torch.where(dm < df, softening, one))
        d, advance, dd_old = self.irreversible(trial, x["damage_old"])
        scale = k * (1.0 - d)
        normal = scale * dn if pen is None else scale * dn + k * pen
        out = {"traction": vec(normal, scale * ds1, scale * ds2), "damage": d}
        if not derivatives:
            return out, {}, {}
        moving = advance & (dm > dc) & (dm < df)
        dd_dm = torch.where(moving, df * dc / (dm * dm * width), zero)
        dd_dc = torch.where(moving, df * (dm - df) / (dm * width * width), zero)
        dd_df = torch.where(moving, -dc * (dm - dc) / (dm * width * width), zero)
        minus_k_jump = -k * vec(dn, ds1, ds2)
        traction = {
            "effective_separation": self.through_damage(minus_k_jump, dd_dm),
            "damage_old": self.through_damage(minus_k_jump, dd_old),
            "normal_separation": vec(scale, zero, zero),
            "tangential_separation_1": vec(zero, scale, zero),
            "tangential_separation_2": vec(zero, zero, scale),
        }
        if pen is not None:
            traction["normal_penetration"] = vec(k * one, zero, zero)
        jac = {
            "traction": traction,
            "damage": {"effective_separation": dd_dm, "damage_old": dd_old},
        }
        intact = 1.0 - d
        dk = vec(intact * dn if pen is None else intact * dn + pen, intact * ds1, intact * ds2)
        pjac = {
            "traction": {
                "penalty_stiffness": dk,
                "critical_separation": self.through_damage(minus_k_jump, dd_dc),
                "full_separation": self.through_damage(minus_k_jump, dd_df),
            },
            "damage": {"critical_separation": dd_dc, "full_separation": dd_df},
        }
        return out, jac, pjac


@register
class SalehaniIraniTraction(_Damaging):
    """Salehani and Irani's coupled exponential law, with irreversible damage.

    ``b_n = dn / dn0``, ``b_si = dsi / (sqrt(2) dt0)``, ``x = b_n + b_s1^2 + b_s2^2``, the
    trial damage ``1 - exp(-x)`` and ``d = max(trial, <damage>~1)``; then
    ``T_n = e T_n,max b_n (1 - d) + K_pen pen`` and ``T_si = sqrt(2 e) T_s,max b_si (1 - d)``.
    Parameters: ``normal_characteristic_length`` (dn0), ``tangential_characteristic_length``
    (dt0), ``normal_strength``, ``shear_strength`` (all required) and
    ``penalty_stiffness`` (default 0, used with ``normal_penetration``).
    """

    type_name = "SalehaniIraniTraction"
    inputs_spec = (*SEPARATIONS, ("damage_old", None, SCALAR))
    outputs_spec = (("traction", "traction", VEC), ("damage", "damage", SCALAR))
    params_spec = (
        ("normal_characteristic_length", None),
        ("tangential_characteristic_length", None),
        ("normal_strength", None),
        ("shear_strength", None),
        ("penalty_stiffness", 0.0),
    )

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        dn, ds1, ds2, pen = separations(x)
        ln, lt = p["normal_characteristic_length"], p["tangential_characteristic_length"]
        tn, ts, kpen = p["normal_strength"], p["shear_strength"], p["penalty_stiffness"]
        lt_int = math.sqrt(2.0) * lt
        a_n, a_t = math.e * tn, math.sqrt(2.0 * math.e) * ts
        bn, b1, b2 = dn / ln, ds1 / lt_int, ds2 / lt_int
        decay = torch.exp(-(bn + b1 * b1 + b2 * b2))
        d, advance, dd_old = self.irreversible(1.0 - decay, x["damage_old"])
        intact = 1.0 - d
        normal = a_n * bn * intact
        if pen is not None:
            normal = normal + kpen * pen
        out = {"traction": vec(normal, a_t * b1 * intact, a_t * b2 * intact), "damage": d}
        if not derivatives:
            return out, {}, {}
        zero = torch.zeros_like(dn)

        def moving(dx: torch.Tensor) -> torch.Tensor:
            """d(damage)/dq from dx/dq: the trial's derivative where it advances."""
            return torch.where(advance, decay * dx, zero)

        ab = vec(a_n * bn, a_t * b1, a_t * b2)
        dd_dn, dd_1, dd_2 = (
            moving(1.0 / ln + zero),
            moving(2.0 * b1 / lt_int),
            moving(2.0 * b2 / lt_int),
        )
        direct_n, direct_t = a_n * intact / ln, a_t * intact / lt_int
        traction = {
            "normal_separation": vec(direct_n + zero, zero, zero) - self.through_damage(ab, dd_dn),
            "tangential_separation_1": vec(zero, direct_t, zero) - self.through_damage(ab, dd_1),
            "tangential_separation_2": vec(zero, zero, direct_t) - self.through_damage(ab, dd_2),
            "damage_old": -self.through_damage(ab, dd_old),
        }
        if pen is not None:
            traction["normal_penetration"] = vec(kpen + zero, zero, zero)
        jac = {
            "traction": traction,
            "damage": {
                "normal_separation": dd_dn,
                "tangential_separation_1": dd_1,
                "tangential_separation_2": dd_2,
                "damage_old": dd_old,
            },
        }
        # the lengths act through b (b_n ~ 1/dn0, b_si ~ 1/dt0) and through the damage
        dd_ln = moving(-bn / ln)
        dd_lt = moving(-2.0 * (b1 * b1 + b2 * b2) / lt)
        pjac = {
            "traction": {
                "normal_characteristic_length": vec(-a_n * bn * intact / ln, zero, zero)
                - self.through_damage(ab, dd_ln),
                "tangential_characteristic_length": vec(
                    zero, -a_t * b1 * intact / lt, -a_t * b2 * intact / lt
                )
                - self.through_damage(ab, dd_lt),
                "normal_strength": vec(math.e * bn * intact, zero, zero),
                "shear_strength": vec(
                    zero,
                    math.sqrt(2.0 * math.e) * b1 * intact,
                    math.sqrt(2.0 * math.e) * b2 * intact,
                ),
                "penalty_stiffness": vec(zero if pen is None else pen, zero, zero),
            },
            "damage": {
                "normal_characteristic_length": dd_ln,
                "tangential_characteristic_length": dd_lt,
            },
        }
        return out, jac, pjac


@register
class OrthotropicLinearTraction(Block):
    """``T = (K_n dn + K_pen pen, K_t ds1, K_t ds2)``, a linear interface.

    Parameters: ``normal_stiffness`` and ``tangential_stiffness`` (required),
    ``penalty_stiffness`` (default 0, used with ``normal_penetration``).
    """

    type_name = "OrthotropicLinearTraction"
    inputs_spec = SEPARATIONS
    outputs_spec = (("traction", "traction", VEC),)
    params_spec = (
        ("normal_stiffness", None),
        ("tangential_stiffness", None),
        ("penalty_stiffness", 0.0),
    )

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        dn, ds1, ds2, pen = separations(x)
        kn, kt, kpen = p["normal_stiffness"], p["tangential_stiffness"], p["penalty_stiffness"]
        normal = kn * dn if pen is None else kn * dn + kpen * pen
        out = {"traction": vec(normal, kt * ds1, kt * ds2)}
        if not derivatives:
            return out, {}, {}
        zero = torch.zeros_like(dn)
        traction = {
            "normal_separation": vec(kn + zero, zero, zero),
            "tangential_separation_1": vec(zero, kt + zero, zero),
            "tangential_separation_2": vec(zero, zero, kt + zero),
        }
        if pen is not None:
            traction["normal_penetration"] = vec(kpen + zero, zero, zero)
        pjac = {
            "traction": {
                "normal_stiffness": vec(dn, zero, zero),
                "tangential_stiffness": vec(zero, ds1, ds2),
                "penalty_stiffness": vec(zero if pen is None else pen, zero, zero),
            }
        }
        return out, {"traction": traction}, pjac
