"""The Kocks-Mecking family: a normalised activation energy that switches between
rate-independent and rate-dependent flow, and the temperature-dependent Perzyna
constants it implies, with NEML2's type names, options and defaults.

``A``, ``B``, ``C`` are the slope, intercept and horizontal value of the Kocks-Mecking
diagram; ``mu`` the ``shear_modulus``; ``k``, ``b`` and ``eps0`` (the Boltzmann constant,
the Burgers vector length and a reference strain rate) are constants, as in NEML2.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import ClassVar

import torch

from ..hit import Section
from .base import Blocks, Model, Tensors, Variable, variable_name
from .block import SCALAR, Block
from .registry import register


class _Constants(Block):
    """A block with required number options that are constants (not parameters)."""

    constants: ClassVar[tuple[tuple[str, float | None], ...]] = ()

    def __init_subclass__(cls, **kwargs: object) -> None:
        cls.extra_options = frozenset(k for k, _ in cls.constants)
        super().__init_subclass__(**kwargs)

    def configure(self, section: Section | None) -> None:
        self.c = {k: v for k, v in self.constants if v is not None}
        if section is None:
            return
        for key, default in self.constants:
            self.c[key] = section.number(key) if default is None else section.number(key, default)


@register
class KocksMeckingActivationEnergy(_Constants):
    """``activation_energy = k T / (mu b^3) log(eps0 / strain_rate)``."""

    type_name = "KocksMeckingActivationEnergy"
    inputs_spec = (("temperature", "temperature", SCALAR), ("strain_rate", "strain_rate", SCALAR))
    outputs_spec = (("activation_energy", "activation_energy", SCALAR),)
    params_spec = (("shear_modulus", None),)
    constants = (("eps0", None), ("k", None), ("b", None))

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        T, rate, mu = x["temperature"], x["strain_rate"], p["shear_modulus"]
        k, b3 = self.c["k"], self.c["b"] ** 3
        log_ratio = torch.log(self.c["eps0"] / rate)
        g = k * T / (mu * b3) * log_ratio
        jac = {"temperature": k / (mu * b3) * log_ratio, "strain_rate": -k * T / (mu * b3 * rate)}
        pjac = {"activation_energy": {"shear_modulus": -g / mu}}
        return {"activation_energy": g}, {"activation_energy": jac}, pjac


@register
class KocksMeckingFlowSwitch(_Constants):
    """``flow_rate = s rate_dependent_flow_rate + (1 - s) rate_independent_flow_rate``
    with ``s = (1 + tanh(sharpness (activation_energy - g0))) / 2``: a soft switch to
    rate-dependent flow above the critical activation energy ``g0``."""

    type_name = "KocksMeckingFlowSwitch"
    inputs_spec = (
        ("activation_energy", "activation_energy", SCALAR),
        ("rate_independent_flow_rate", "rate_independent_flow_rate", SCALAR),
        ("rate_dependent_flow_rate", "rate_dependent_flow_rate", SCALAR),
    )
    outputs_spec = (("flow_rate", "flow_rate", SCALAR),)
    params_spec = (("g0", None),)
    constants = (("sharpness", 1.0),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        g = x["activation_energy"]
        ri, rd = x["rate_independent_flow_rate"], x["rate_dependent_flow_rate"]
        sharp = self.c["sharpness"]
        arg = sharp * (g - p["g0"])
        s = (torch.tanh(arg) + 1) / 2
        d_g = 0.5 * sharp / torch.cosh(arg) ** 2 * (rd - ri)
        jac = {
            "activation_energy": d_g,
            "rate_independent_flow_rate": 1 - s,
            "rate_dependent_flow_rate": s,
        }
        out = {"flow_rate": s * rd + (1 - s) * ri}
        return out, {"flow_rate": jac}, {"flow_rate": {"g0": -d_g}}


@register
class KocksMeckingFlowViscosity(_Constants):
    """``viscosity = exp(B) mu eps0^(k T A / (mu b^3))``, the exponent's sign NEML2
    3.1.0's code's (its documentation writes it negative); the output is named after
    the block unless ``viscosity`` names it."""

    type_name = "KocksMeckingFlowViscosity"
    inputs_spec = (("temperature", "temperature", SCALAR),)
    outputs_spec = (("viscosity", None, SCALAR),)
    params_spec = (("A", None), ("B", None), ("shear_modulus", None))
    constants = (("eps0", None), ("k", None), ("b", None))

    @classmethod
    def default_names(cls, section: Section) -> dict[str, str]:
        names = super().default_names(section)
        names.setdefault("viscosity", variable_name(section, "viscosity", section.name))
        return names

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        T = x["temperature"]
        A, B, mu = p["A"], p["B"], p["shear_modulus"]
        k, b3, log_eps0 = self.c["k"], self.c["b"] ** 3, math.log(self.c["eps0"])
        eta = torch.exp(B) * mu * torch.exp(k * T * A / (mu * b3) * log_eps0)
        # d eta / d c = eta log(eps0) for the exponent c = k T A / (mu b^3)
        d_exponent = eta * log_eps0
        jac = {"viscosity": {"temperature": d_exponent * k * A / (mu * b3)}}
        pjac = {
            "viscosity": {
                "A": d_exponent * k * T / (mu * b3),
                "B": eta,
                "shear_modulus": eta / mu - d_exponent * k * T * A / (mu * mu * b3),
            }
        }
        return {"viscosity": eta}, jac, pjac


@register
class KocksMeckingRateSensitivity(_Constants):
    """``rate_sensitivity = -mu b^3 / (k T A)``: NEML2 3.1.0's sign (its documentation
    writes the expression without the minus, its code with it)."""

    type_name = "KocksMeckingRateSensitivity"
    inputs_spec = (("temperature", "temperature", SCALAR),)
    outputs_spec = (("rate_sensitivity", "rate_sensitivity", SCALAR),)
    params_spec = (("A", None), ("shear_modulus", None))
    constants = (("k", None), ("b", None))

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        T, A, mu = x["temperature"], p["A"], p["shear_modulus"]
        m = -mu * self.c["b"] ** 3 / (self.c["k"] * T * A)
        jac = {"rate_sensitivity": {"temperature": -m / T}}
        pjac = {"rate_sensitivity": {"A": -m / A, "shear_modulus": m / mu}}
        return {"rate_sensitivity": m}, jac, pjac


class _FromParameters(Model):
    """One Scalar output computed from parameters alone (no inputs): one point, which
    broadcasts over any batch. ``params`` lists the parameter keys and their defaults."""

    params: ClassVar[tuple[str, ...]]
    output_key: ClassVar[str]

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.options = frozenset({*cls.params, cls.output_key})

    def __init__(self, name: str, output: str, values: Mapping[str, float]) -> None:
        self.target = output
        params = {
            f"{name}.{k}": torch.tensor(float(v), dtype=torch.float64) for k, v in values.items()
        }
        super().__init__(name, [], [Variable(output, SCALAR)], params)

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        output = variable_name(section, cls.output_key, cls.output_key)
        return cls(section.name, output, {k: section.number(k) for k in cls.params})

    def value(self, p: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The output and its derivative by each parameter key."""
        raise NotImplementedError

    def _by_key(self, p: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        return {k: p[f"{self.name}.{k}"] for k in self.params}

    def eval_forward(self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]) -> Tensors:
        return {self.target: self.value(self._by_key(p))[0].unsqueeze(0)}

    def eval_jacobian(self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]) -> Blocks:
        return {self.target: {}}

    def eval_param_jacobian(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]
    ) -> Blocks:
        d = self.value(self._by_key(p))[1]
        return {self.target: {f"{self.name}.{k}": v for k, v in d.items()}}

    def param_jacobian_batched(self, of: str, param: str) -> bool:
        return False


@register
class KocksMeckingIntercept(_FromParameters):
    """``intercept = (C - B) / A``, the critical normalised activation energy."""

    type_name = "KocksMeckingIntercept"
    params = ("A", "B", "C")
    output_key = "intercept"

    def value(self, p: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        A, B, C = p["A"], p["B"], p["C"]
        value = (C - B) / A
        return value, {"A": -value / A, "B": -1 / A, "C": 1 / A}


@register
class KocksMeckingYieldStress(_FromParameters):
    """``yield_stress = exp(C) mu``."""

    type_name = "KocksMeckingYieldStress"
    params = ("C", "shear_modulus")
    output_key = "yield_stress"

    def value(self, p: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        eC = torch.exp(p["C"])
        value = eC * p["shear_modulus"]
        return value, {"C": value, "shear_modulus": eC}
