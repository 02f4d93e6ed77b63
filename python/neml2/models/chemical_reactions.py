"""Chemical reactions: reaction mechanisms (Avrami-Erofeev nucleation, contracting
geometry, diffusion-limited reaction), the radii of a cylindrical product channel and
the effective volume of a reacting composite, with NEML2 3.1.0's type names, options,
defaults and variable names.

Every variable is a Scalar. The parameters NEML2 declares are parameters here
(``<block>.<option>``); those NEML2 lets a variable or model give (``coef``,
``diffusion_coefficient``, ...) are registered as coupled parameters; NEML2's plain
number options (``molar_volume``, ``product_dummy_thickness``) are constants of the
model. Regularisations follow NEML2: the machine epsilon clamps ``1 - a`` of the
contracting geometry and the channel's ``1 - phi_s - phi_p``, and the derivative of a
clamped value is the unclamped expression's (the contracting geometry's) or zero only
below the lower bound (the channel's inner radius), as NEML2 writes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch

from ..hit import Section
from .base import Blocks, Leaf, Model, Tensors, Variable, check_distinct, variable_name
from .block import SCALAR, Block
from .coupling import COUPLABLE
from .registry import register

__all__ = [
    "AvramiErofeevNucleation",
    "ContractingGeometry",
    "CylindricalChannelGeometry",
    "DiffusionLimitedReaction",
    "EffectiveVolume",
]

#: The parameters NEML2 3.1.0 lets a variable (or a model's output) give.
COUPLABLE.update(
    {
        "AvramiErofeevNucleation": ("coef", "order"),
        "ContractingGeometry": ("coef",),
        "DiffusionLimitedReaction": ("diffusion_coefficient",),
        "EffectiveVolume": ("reference_mass",),
    }
)


def machine_epsilon(like: torch.Tensor) -> float:
    return torch.finfo(like.dtype).eps


class _Mechanism(Block):
    """A reaction mechanism: ``reaction_rate`` of the ``conversion_degree`` ``a``, with
    the parameters ``coef`` (k) and ``order`` (n), both required."""

    inputs_spec = (("conversion_degree", "conversion_degree", SCALAR),)
    outputs_spec = (("reaction_rate", "reaction_rate", SCALAR),)
    params_spec = (("coef", None), ("order", None))


@register
class AvramiErofeevNucleation(_Mechanism):
    """``reaction_rate = k (1 - a) (-ln(1 - a))^n`` (Avrami-Erofeev nucleation).

    The derivative in ``a`` is ``k (n (-ln(1 - a))^(n - 1) - (-ln(1 - a))^n)``; at
    ``a = 0`` it is infinite for ``n < 1`` (as in NEML2), and ``order``'s derivative
    ``f ln(-ln(1 - a))`` needs ``0 < a < 1``.
    """

    type_name = "AvramiErofeevNucleation"

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        a, k, n = x["conversion_degree"], p["coef"], p["order"]
        u = 1.0 - a
        g = -torch.log(u)
        g_n = g**n
        f = k * u * g_n
        out = {"reaction_rate": f}
        if not derivatives:
            return out, {}, {}
        jac = {"reaction_rate": {"conversion_degree": k * (n * g ** (n - 1.0) - g_n)}}
        # ln(-ln(1 - a)) where a > 0; at a = 0 the rate is 0 for every order (n > 0)
        positive = g > 0
        log_g = torch.log(torch.where(positive, g, torch.ones_like(g)))
        d_order = torch.where(positive, f * log_g, torch.zeros_like(f))
        pjac = {"reaction_rate": {"coef": u * g_n, "order": d_order}}
        return out, jac, pjac


@register
class ContractingGeometry(_Mechanism):
    """``reaction_rate = k c^n``, ``c = clamp(1 - a, eps, 1 - eps)`` (contracting geometry).

    The derivative in ``a`` is ``-k n c^(n - 1)`` everywhere, the clamped ends included
    (NEML2 does not zero it there).
    """

    type_name = "ContractingGeometry"

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        a, k, n = x["conversion_degree"], p["coef"], p["order"]
        eps = machine_epsilon(a)
        c = torch.clamp(1.0 - a, eps, 1.0 - eps)
        c_n = c**n
        f = k * c_n
        out = {"reaction_rate": f}
        if not derivatives:
            return out, {}, {}
        jac = {"reaction_rate": {"conversion_degree": -k * n * c ** (n - 1.0)}}
        pjac = {"reaction_rate": {"coef": c_n, "order": f * torch.log(c)}}
        return out, jac, pjac


@register
class CylindricalChannelGeometry(Block):
    """The dimensionless radii of a cylindrical product channel:
    ``inner_radius = sqrt(clamp(1 - phi_s - phi_p, eps, 1 - eps))`` and
    ``outer_radius = sqrt(1 - phi_s)``, ``phi_s`` the ``solid_fraction`` and ``phi_p``
    the ``product_fraction``.

    The inner radius's derivatives are ``-1 / (2 r_i)`` in both fractions where
    ``1 - phi_s - phi_p > eps``, else 0 (NEML2 guards the lower end only).
    """

    type_name = "CylindricalChannelGeometry"
    inputs_spec = (
        ("solid_fraction", "solid_fraction", SCALAR),
        ("product_fraction", "product_fraction", SCALAR),
    )
    outputs_spec = (
        ("inner_radius", "inner_radius", SCALAR),
        ("outer_radius", "outer_radius", SCALAR),
    )

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        phi_s, phi_p = x["solid_fraction"], x["product_fraction"]
        eps = machine_epsilon(phi_s)
        cap = 1.0 - phi_s - phi_p
        ri = torch.sqrt(torch.clamp(cap, eps, 1.0 - eps))
        ro = torch.sqrt(1.0 - phi_s)
        out = {"inner_radius": ri, "outer_radius": ro}
        if not derivatives:
            return out, {}, {}
        dri = torch.where(cap > eps, -0.5 / ri, torch.zeros_like(ri))
        jac = {
            "inner_radius": {"solid_fraction": dri, "product_fraction": dri},
            "outer_radius": {"solid_fraction": -0.5 / ro},
        }
        return out, jac, {}


@register
class DiffusionLimitedReaction(Block):
    """``reaction_rate = 2 D R_l R_s / omega * r_o / (r_o - r_i + delta)``, the rate of a
    reaction limited by diffusion through the product shell.

    Inputs: ``product_inner_radius`` (r_i), ``solid_inner_radius`` (r_o),
    ``liquid_reactivity`` (R_l) and ``solid_reactivity`` (R_s). Parameter:
    ``diffusion_coefficient`` (D, required). Constants: ``molar_volume`` (omega,
    required) and ``product_dummy_thickness`` (delta, default 0.01).
    """

    type_name = "DiffusionLimitedReaction"
    inputs_spec = (
        ("product_inner_radius", "product_inner_radius", SCALAR),
        ("solid_inner_radius", "solid_inner_radius", SCALAR),
        ("liquid_reactivity", "liquid_reactivity", SCALAR),
        ("solid_reactivity", "solid_reactivity", SCALAR),
    )
    outputs_spec = (("reaction_rate", "reaction_rate", SCALAR),)
    params_spec = (("diffusion_coefficient", None),)
    extra_options = frozenset({"molar_volume", "product_dummy_thickness"})
    #: The constants where the model is built without an input file.
    omega: float = 1.0
    delta: float = 0.01

    def configure(self, section: Section | None) -> None:
        if section is not None:
            self.omega = section.number("molar_volume")
            self.delta = section.number("product_dummy_thickness", 0.01)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        ri, ro = x["product_inner_radius"], x["solid_inner_radius"]
        rl, rs = x["liquid_reactivity"], x["solid_reactivity"]
        D = p["diffusion_coefficient"]
        thickness = ro - ri + self.delta
        ratio = ro / thickness
        front = 2.0 / self.omega
        rate = front * D * rl * rs * ratio
        out = {"reaction_rate": rate}
        if not derivatives:
            return out, {}, {}
        per_thickness = front * D * rl * rs / (thickness * thickness)
        jac = {
            "reaction_rate": {
                "product_inner_radius": per_thickness * ro,
                "solid_inner_radius": per_thickness * (self.delta - ri),
                "liquid_reactivity": front * D * rs * ratio,
                "solid_reactivity": front * D * rl * ratio,
            }
        }
        pjac = {"reaction_rate": {"diffusion_coefficient": front * rl * rs * ratio}}
        return out, jac, pjac


@register
class EffectiveVolume(Leaf):
    """``composite_volume = M / (1 - phi_o) sum_i w_i / rho_i``, the volume of a control
    mass of composite.

    Keys: ``mass_fractions`` (the Scalar inputs w_i, at least one), ``densities`` (rho_i,
    one number per mass fraction), ``reference_mass`` (M, required),
    ``open_volume_fraction`` (phi_o, an optional input: without it the prefactor is M)
    and ``composite_volume`` (the output, default ``composite_volume``). Parameters:
    ``<block>.reference_mass`` and ``<block>.densities`` (shape ``(n,)``).
    """

    type_name = "EffectiveVolume"
    options = frozenset(
        {
            "mass_fractions",
            "densities",
            "reference_mass",
            "open_volume_fraction",
            "composite_volume",
        }
    )

    def __init__(
        self,
        name: str,
        fractions: Sequence[str],
        target: str,
        reference_mass: float,
        densities: Sequence[float],
        open_fraction: str | None = None,
    ) -> None:
        self.fractions = list(fractions)
        self.open_fraction = open_fraction
        self.target = target
        self.mass = f"{name}.reference_mass"
        self.densities = f"{name}.densities"
        params = {
            self.mass: torch.tensor(float(reference_mass), dtype=Model.dtype),
            self.densities: torch.tensor([float(r) for r in densities], dtype=Model.dtype),
        }
        names = ([open_fraction] if open_fraction else []) + self.fractions
        super().__init__(
            name, [Variable(v, SCALAR) for v in names], [Variable(target, SCALAR)], params
        )

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        fractions = section.strings("mass_fractions")
        if not fractions:
            raise section.error(
                "mass_fractions", "parameter 'mass_fractions': expected at least one variable name"
            )
        for index, item in enumerate(fractions):
            if item in fractions[:index]:
                raise section.error(
                    "mass_fractions", f"parameter 'mass_fractions': '{item}' is listed twice"
                )
        densities = section.numbers("densities")
        if len(densities) != len(fractions):
            raise section.error(
                "densities",
                f"parameter 'densities': expected one density per mass fraction "
                f"({len(fractions)}), got {len(densities)}",
            )
        target = variable_name(section, "composite_volume", "composite_volume")
        open_fraction = None
        if "open_volume_fraction" in section.params:
            open_fraction = variable_name(section, "open_volume_fraction", "")
        names = {f"mass_fractions[{i}]": f for i, f in enumerate(fractions)}
        if open_fraction is not None:
            names["open_volume_fraction"] = open_fraction
        names["composite_volume"] = target
        check_distinct(section, names)
        return cls(
            section.name,
            fractions,
            target,
            section.number("reference_mass"),
            densities,
            open_fraction,
        )

    def kernel(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        w = torch.stack([x[f] for f in self.fractions], -1)  # (B, n)
        M, rho = p[self.mass], p[self.densities]
        total = (w / rho).sum(-1)
        per_mass = torch.ones_like(total)  # d coef / d M
        if self.open_fraction is not None:
            per_mass = 1.0 / (1.0 - x[self.open_fraction])
        coef = M * per_mass
        volume = coef * total
        out = {self.target: volume}
        if not derivatives:
            return out, {}, {}
        row = {f: coef / rho[i] for i, f in enumerate(self.fractions)}
        if self.open_fraction is not None:
            row[self.open_fraction] = volume * per_mass
        pjac = {
            self.target: {
                self.mass: per_mass * total,
                self.densities: -coef.unsqueeze(-1) * w / (rho * rho),
            }
        }
        return out, {self.target: row}, pjac
