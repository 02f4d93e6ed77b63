"""Small-strain plasticity building blocks, with NEML2's type names, options and defaults.

Each block is one equation with analytic derivatives; blocks are chained with
``ComposedModel`` and the implicit ones solved with ``ImplicitUpdate``. Mandel
6-vectors throughout: ``I = [1, 1, 1, 0, 0, 0]``, ``dev(a) = a - tr(a)/3 I``, and the
dot product of two vectors is the double contraction of the tensors.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import ClassVar

import torch

from ..hit import Section
from .base import Blocks, Tensors
from .block import SCALAR, SR2, Block, batched, deviator, identity, outer, projector
from .registry import register

SQRT23 = math.sqrt(2.0 / 3.0)


@register
class SR2Invariant(Block):
    """``invariant`` of ``tensor`` by ``invariant_type`` (required), NEML2 3.1.0's three:
    VONMISES ``sqrt(3/2 dev:dev + eps)``, EFFECTIVE_STRAIN ``sqrt(2/3 dev:dev + eps)``
    (eps the machine epsilon, so that both and their derivatives are finite at a zero
    deviator) and I1 ``tr``. NEML2 3.1.0 names I2 and INVALID but refuses both."""

    type_name = "SR2Invariant"
    inputs_spec = (("tensor", None, SR2),)
    outputs_spec = (("invariant", None, SCALAR),)
    extra_options = frozenset({"invariant_type"})
    KINDS: ClassVar[dict[str, float]] = {"VONMISES": 1.5, "EFFECTIVE_STRAIN": 2.0 / 3.0, "I1": 0}

    def configure(self, section: Section | None) -> None:
        if section is None:
            return
        kind = section.string("invariant_type")
        if kind not in self.KINDS:
            known = "I2 and INVALID are named but not implemented by NEML2 3.1.0; "
            raise section.error(
                "invariant_type",
                f"parameter 'invariant_type': '{kind}' is not supported; "
                f"{known if kind in ('I2', 'INVALID') else ''}"
                f"expected one of: {', '.join(self.KINDS)}",
            )
        self.kind = kind

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        a = x["tensor"]
        eye = identity(a)
        trace = a[..., 0] + a[..., 1] + a[..., 2]
        if self.kind == "I1":
            jac = {"invariant": {"tensor": eye * torch.ones_like(a)}} if derivatives else {}
            return {"invariant": trace}, jac, {}
        c = self.KINDS[self.kind]
        dev = a - (trace / 3).unsqueeze(-1) * eye
        value = torch.sqrt(c * dev.square().sum(-1) + torch.finfo(a.dtype).eps)
        if not derivatives:
            return {"invariant": value}, {}, {}
        d = c * dev / value.unsqueeze(-1)
        return {"invariant": value}, {"invariant": {"tensor": d}}, {}

    def compute_second(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]
    ) -> dict[str, dict[tuple[str, str], torch.Tensor]]:
        """``c P / v - c^2 dev (x) dev / v^3`` (``P`` the deviatoric projector); I1 is linear."""
        if self.kind == "I1":
            return {}
        a = x["tensor"]
        c = self.KINDS[self.kind]
        dev = deviator(a)
        v = torch.sqrt(c * dev.square().sum(-1) + torch.finfo(a.dtype).eps).reshape(-1, 1, 1)
        block = c / v * projector(a) - c * c * outer(dev, dev) / v**3
        return {"invariant": {("tensor", "tensor"): block}}


@register
class AssociativeJ2FlowDirection(Block):
    """``flow_direction = 3/2 dev(M) / vm(M)``, the gradient of the von Mises stress."""

    type_name = "AssociativeJ2FlowDirection"
    inputs_spec = (("mandel_stress", "mandel_stress", SR2),)
    outputs_spec = (("flow_direction", "flow_direction", SR2),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        M = x["mandel_stress"]
        dev = deviator(M)
        vm = (1.5 * dev.square().sum(-1)).sqrt()
        ok = (vm > 0).unsqueeze(-1)
        safe = torch.where(vm > 0, vm, torch.ones_like(vm)).unsqueeze(-1)
        N = torch.where(ok, 1.5 * dev / safe, torch.zeros_like(dev))
        if not derivatives:
            return {"flow_direction": N}, {}, {}
        P = projector(M)
        dN = (1.5 / safe).unsqueeze(-1) * (P - 1.5 * outer(dev, dev) / (safe * safe).unsqueeze(-1))
        dN = torch.where(ok.unsqueeze(-1), dN, torch.zeros_like(dN))
        return {"flow_direction": N}, {"flow_direction": {"mandel_stress": dN}}, {}


@register
class IsotropicMandelStress(Block):
    """``mandel_stress = cauchy_stress`` (small strain)."""

    type_name = "IsotropicMandelStress"
    inputs_spec = (("cauchy_stress", "cauchy_stress", SR2),)
    outputs_spec = (("mandel_stress", "mandel_stress", SR2),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        s = x["cauchy_stress"]
        eye = batched(torch.eye(6, dtype=s.dtype).to(s.device), s.shape[0])
        return {"mandel_stress": s}, {"mandel_stress": {"cauchy_stress": eye}}, {}

    def compute_second(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]
    ) -> dict[str, dict[tuple[str, str], torch.Tensor]]:
        """Linear: no second derivatives."""
        return {}


@register
class YieldFunction(Block):
    """``yield_function = sqrt(2/3) (effective_stress - yield_stress - isotropic_hardening)``;
    ``isotropic_hardening`` only where the key is given."""

    type_name = "YieldFunction"
    inputs_spec = (
        ("effective_stress", "effective_stress", SCALAR),
        ("isotropic_hardening", None, SCALAR),
    )
    outputs_spec = (("yield_function", "yield_function", SCALAR),)
    params_spec = (("yield_stress", None),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        s = x["effective_stress"]
        f = SQRT23 * (s - p["yield_stress"])
        jac = {"effective_stress": torch.full_like(s, SQRT23)}
        if "isotropic_hardening" in x:
            f = f - SQRT23 * x["isotropic_hardening"]
            jac["isotropic_hardening"] = torch.full_like(s, -SQRT23)
        pjac = {"yield_function": {"yield_stress": torch.full_like(s, -SQRT23)}}
        return {"yield_function": f}, {"yield_function": jac}, pjac

    def compute_second(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]
    ) -> dict[str, dict[tuple[str, str], torch.Tensor]]:
        """Linear in its inputs and its parameter: no second derivatives."""
        return {}


@register
class PerzynaPlasticFlowRate(Block):
    """``flow_rate = (<f> / reference_stress)^exponent``, zero where ``f <= 0``."""

    type_name = "PerzynaPlasticFlowRate"
    inputs_spec = (("yield_function", "yield_function", SCALAR),)
    outputs_spec = (("flow_rate", "flow_rate", SCALAR),)
    params_spec = (("reference_stress", None), ("exponent", None))

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        f = x["yield_function"]
        eta, n = p["reference_stress"], p["exponent"]
        on = f > 0
        safe = torch.where(on, f, torch.ones_like(f))
        rate = torch.where(on, (safe / eta) ** n, torch.zeros_like(f))
        jac = {
            "flow_rate": {"yield_function": torch.where(on, n * rate / safe, torch.zeros_like(f))}
        }
        pjac = {
            "flow_rate": {
                "reference_stress": -n * rate / eta,
                "exponent": torch.where(on, rate * torch.log(safe / eta), torch.zeros_like(f)),
            }
        }
        return {"flow_rate": rate}, jac, pjac


@register
class LinearIsotropicHardening(Block):
    """``isotropic_hardening = hardening_modulus * equivalent_plastic_strain``."""

    type_name = "LinearIsotropicHardening"
    inputs_spec = (("equivalent_plastic_strain", "equivalent_plastic_strain", SCALAR),)
    outputs_spec = (("isotropic_hardening", "isotropic_hardening", SCALAR),)
    params_spec = (("hardening_modulus", None),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        ep, K = x["equivalent_plastic_strain"], p["hardening_modulus"]
        jac = {"isotropic_hardening": {"equivalent_plastic_strain": K * torch.ones_like(ep)}}
        return (
            {"isotropic_hardening": K * ep},
            jac,
            {"isotropic_hardening": {"hardening_modulus": ep}},
        )


@register
class VoceIsotropicHardening(Block):
    """``isotropic_hardening = saturated_hardening (1 - exp(-saturation_rate ep))``."""

    type_name = "VoceIsotropicHardening"
    inputs_spec = (("equivalent_plastic_strain", "equivalent_plastic_strain", SCALAR),)
    outputs_spec = (("isotropic_hardening", "isotropic_hardening", SCALAR),)
    params_spec = (("saturated_hardening", None), ("saturation_rate", None))

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        ep = x["equivalent_plastic_strain"]
        R, d = p["saturated_hardening"], p["saturation_rate"]
        e = torch.exp(-d * ep)
        h = R * (1 - e)
        jac = {"isotropic_hardening": {"equivalent_plastic_strain": R * d * e}}
        pjac = {
            "isotropic_hardening": {"saturated_hardening": 1 - e, "saturation_rate": ep * R * e}
        }
        return {"isotropic_hardening": h}, jac, pjac


@register
class LinearKinematicHardening(Block):
    """``back_stress = hardening_modulus * kinematic_plastic_strain``."""

    type_name = "LinearKinematicHardening"
    inputs_spec = (("kinematic_plastic_strain", "kinematic_plastic_strain", SR2),)
    outputs_spec = (("back_stress", "back_stress", SR2),)
    params_spec = (("hardening_modulus", None),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        Kp, H = x["kinematic_plastic_strain"], p["hardening_modulus"]
        eye = batched(torch.eye(6, dtype=Kp.dtype).to(Kp.device), Kp.shape[0])
        jac = {"back_stress": {"kinematic_plastic_strain": H * eye}}
        return {"back_stress": H * Kp}, jac, {"back_stress": {"hardening_modulus": Kp}}


@register
class FredrickArmstrongPlasticHardening(Block):
    """``back_stress_rate = (2/3 C flow_direction - g back_stress) flow_rate``; the output
    is named ``<back_stress>_rate`` unless ``back_stress_rate`` names it."""

    type_name = "FredrickArmstrongPlasticHardening"
    inputs_spec = (
        ("flow_rate", "flow_rate", SCALAR),
        ("flow_direction", "flow_direction", SR2),
        ("back_stress", "back_stress", SR2),
    )
    outputs_spec = (("back_stress_rate", None, SR2),)
    params_spec = (("C", None), ("g", None))

    @classmethod
    def default_names(cls, section: Section) -> dict[str, str]:
        names = super().default_names(section)
        names.setdefault("back_stress_rate", f"{names['back_stress']}_rate")
        return names

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        gamma, N, X = x["flow_rate"], x["flow_direction"], x["back_stress"]
        C, g = p["C"], p["g"]
        term = 2.0 / 3.0 * C * N - g * X
        rate = term * gamma.unsqueeze(-1)
        eye = torch.eye(6, dtype=X.dtype).to(X.device)
        jac = {
            "back_stress_rate": {
                "flow_rate": term,
                "flow_direction": (2.0 / 3.0 * C * gamma).reshape(-1, 1, 1) * eye,
                "back_stress": (-g * gamma).reshape(-1, 1, 1) * eye,
            }
        }
        pjac = {
            "back_stress_rate": {
                "C": 2.0 / 3.0 * N * gamma.unsqueeze(-1),
                "g": -X * gamma.unsqueeze(-1),
            }
        }
        return {"back_stress_rate": rate}, jac, pjac


class _RateTimesDirection(Block):
    """``out = sign * flow_rate * direction`` (the associative flow rules)."""

    sign: ClassVar[float] = 1.0
    direction: ClassVar[str]
    target: ClassVar[str]

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        gamma, N = x["flow_rate"], x[self.direction]
        out = self.sign * (gamma.unsqueeze(-1) * N if N.dim() > 1 else gamma * N)
        if N.dim() > 1:
            eye = torch.eye(6, dtype=N.dtype).to(N.device)
            d_dir = (self.sign * gamma).reshape(-1, 1, 1) * eye
        else:
            d_dir = self.sign * gamma
        jac = {self.target: {"flow_rate": self.sign * N, self.direction: d_dir}}
        return {self.target: out}, jac, {}


@register
class AssociativePlasticFlow(_RateTimesDirection):
    """``plastic_strain_rate = flow_rate * flow_direction``."""

    type_name = "AssociativePlasticFlow"
    inputs_spec = (("flow_rate", "flow_rate", SCALAR), ("flow_direction", "flow_direction", SR2))
    outputs_spec = (("plastic_strain_rate", "plastic_strain_rate", SR2),)
    direction = "flow_direction"
    target = "plastic_strain_rate"


@register
class AssociativeIsotropicPlasticHardening(_RateTimesDirection):
    """``equivalent_plastic_strain_rate = -flow_rate * isotropic_hardening_direction``."""

    type_name = "AssociativeIsotropicPlasticHardening"
    inputs_spec = (
        ("flow_rate", "flow_rate", SCALAR),
        ("isotropic_hardening_direction", "isotropic_hardening_direction", SCALAR),
    )
    outputs_spec = (("equivalent_plastic_strain_rate", "equivalent_plastic_strain_rate", SCALAR),)
    sign = -1.0
    direction = "isotropic_hardening_direction"
    target = "equivalent_plastic_strain_rate"


@register
class AssociativeKinematicPlasticHardening(_RateTimesDirection):
    """``kinematic_plastic_strain_rate = -flow_rate * kinematic_hardening_direction``."""

    type_name = "AssociativeKinematicPlasticHardening"
    inputs_spec = (
        ("flow_rate", "flow_rate", SCALAR),
        ("kinematic_hardening_direction", "kinematic_hardening_direction", SR2),
    )
    outputs_spec = (("kinematic_plastic_strain_rate", "kinematic_plastic_strain_rate", SR2),)
    sign = -1.0
    direction = "kinematic_hardening_direction"
    target = "kinematic_plastic_strain_rate"


@register
class MinMapComplementarity(Block):
    """``complementarity = min(sa a, sb b)``, ``sa``/``sb`` = -1 for LE and +1 for GE
    (defaults: ``a`` LE, ``b`` GE): zero exactly where ``a <= 0 <= b`` and ``a b = 0``."""

    type_name = "MinMapComplementarity"
    inputs_spec = (("a", "a", SCALAR), ("b", "b", SCALAR))
    outputs_spec = (("complementarity", "complementarity", SCALAR),)
    extra_options = frozenset({"a_inequality", "b_inequality"})

    def configure(self, section: Section | None) -> None:
        self.signs = [-1.0, 1.0]
        if section is None:
            return
        for index, (key, default) in enumerate((("a_inequality", "LE"), ("b_inequality", "GE"))):
            text = section.string(key, default)
            if text not in ("LE", "GE"):
                raise section.error(key, f"parameter '{key}': expected LE or GE, got '{text}'")
            self.signs[index] = -1.0 if text == "LE" else 1.0

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        ta, tb = self.signs[0] * x["a"], self.signs[1] * x["b"]
        first = ta < tb
        zero = torch.zeros_like(ta)
        jac = {
            "complementarity": {
                "a": torch.where(first, self.signs[0] + zero, zero),
                "b": torch.where(first, zero, self.signs[1] + zero),
            }
        }
        return {"complementarity": torch.where(first, ta, tb)}, jac, {}
