"""Phase-field fracture: crack geometric functions, degradation functions and the split
linear isotropic strain energy density, with NEML2 3.1.0's type names, options,
defaults and variable names.

The phase field ``d`` (``phase``) and the functions of it are Scalars; the strain is a
Mandel SR2, so ``dev(e):dev(e)`` is the dot product of the deviators. The parameters
NEML2 declares are parameters here (``<block>.<option>``, the elastic constants
``<block>.<symbol>`` as in ``LinearIsotropicElasticity``); the residual degradation
``eta`` (a plain number option in NEML2) is a constant of the model.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from ..hit import Section
from .base import Blocks, Leaf, Model, Tensors, Variable, check_distinct, variable_name
from .block import SCALAR, Block, deviator, identity
from .coupling import COUPLABLE
from .dual import Dual
from .elasticity import coefficient_types, lame_parameters
from .registry import register

__all__ = [
    "CrackGeometricFunctionAT1",
    "CrackGeometricFunctionAT2",
    "LinearIsotropicStrainEnergyDensity",
    "PowerDegradationFunction",
    "RationalDegradationFunction",
]

#: The parameters NEML2 3.1.0 lets a variable (or a model's output) give: the elastic
#: constants of the strain energy density.
COUPLABLE.update({"LinearIsotropicStrainEnergyDensity": ("coefficients",)})

SR2 = (6,)


def power_and_log(u: torch.Tensor, p: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``u^p`` and its derivative in ``p``, ``u^p ln u`` (0 where ``u = 0``, its limit for
    ``p > 0``)."""
    u_p = u**p
    positive = u > 0
    safe = torch.where(positive, u, torch.ones_like(u))
    return u_p, torch.where(positive, u_p * torch.log(safe), torch.zeros_like(u))


class _PhaseFunction(Block):
    """A function of the phase field: ``phase`` in."""

    inputs_spec = (("phase", "phase", SCALAR),)


@register
class CrackGeometricFunctionAT1(_PhaseFunction):
    """``crack = d``, the crack geometric function of the AT-1 functional."""

    type_name = "CrackGeometricFunctionAT1"
    outputs_spec = (("crack", "crack", SCALAR),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        d = x["phase"]
        return {"crack": d.clone()}, {"crack": {"phase": torch.ones_like(d)}}, {}


@register
class CrackGeometricFunctionAT2(_PhaseFunction):
    """``crack = d^2``, the crack geometric function of the AT-2 functional."""

    type_name = "CrackGeometricFunctionAT2"
    outputs_spec = (("crack", "crack", SCALAR),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        d = x["phase"]
        return {"crack": d * d}, {"crack": {"phase": 2.0 * d}}, {}

    def compute_second(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]
    ) -> dict[str, dict[tuple[str, str], torch.Tensor]]:
        return {"crack": {("phase", "phase"): 2.0 * torch.ones_like(x["phase"])}}


class _Degradation(_PhaseFunction):
    """A degradation function: ``degradation`` of ``phase``, with the constant ``eta``
    (the residual degradation at ``d = 1``, default 0)."""

    outputs_spec = (("degradation", "degradation", SCALAR),)
    extra_options = frozenset({"eta"})
    #: The residual degradation where the model is built without an input file.
    eta: float = 0.0

    def configure(self, section: Section | None) -> None:
        if section is not None:
            self.eta = section.number("eta", 0.0)


@register
class PowerDegradationFunction(_Degradation):
    """``degradation = (1 - d)^p (1 - eta) + eta``. Parameter: ``power`` (p, required)."""

    type_name = "PowerDegradationFunction"
    params_spec = (("power", None),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        d, power = x["phase"], p["power"]
        scale = 1.0 - self.eta
        u_p, u_p_log = power_and_log(1.0 - d, power)
        out = {"degradation": u_p * scale + self.eta}
        if not derivatives:
            return out, {}, {}
        jac = {"degradation": {"phase": -power * (1.0 - d) ** (power - 1.0) * scale}}
        return out, jac, {"degradation": {"power": u_p_log * scale}}

    def compute_second(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]
    ) -> dict[str, dict[tuple[str, str], torch.Tensor]]:
        d, power = x["phase"], p["power"]
        scale = 1.0 - self.eta
        u = 1.0 - d
        u_m1, u_m1_log = power_and_log(u, power - 1.0)
        _, u_p_log = power_and_log(u, power)
        positive = u > 0
        log_u = torch.log(torch.where(positive, u, torch.ones_like(u)))
        return {
            "degradation": {
                ("phase", "phase"): power * (power - 1.0) * u ** (power - 2.0) * scale,
                ("phase", "power"): -(u_m1 + power * u_m1_log) * scale,
                ("power", "power"): torch.where(positive, u_p_log * log_u, 0.0 * u) * scale,
            }
        }


@register
class RationalDegradationFunction(_Degradation):
    """``degradation = f / (f + Q) (1 - eta) + eta``, ``f = (1 - d)^p`` and
    ``Q = b1 d (1 + b2 d + b2 b3 d^2)``. Parameters (all required): ``power`` (p),
    ``b1``, ``b2`` and ``b3``."""

    type_name = "RationalDegradationFunction"
    params_spec = (("power", None), ("b1", None), ("b2", None), ("b3", None))

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        d, power = x["phase"], p["power"]
        b1, b2, b3 = p["b1"], p["b2"], p["b3"]
        scale = 1.0 - self.eta
        f, f_log = power_and_log(1.0 - d, power)
        inner = 1.0 + b2 * d + b2 * b3 * d * d
        Q = b1 * d * inner
        D = f + Q
        out = {"degradation": f / D * scale + self.eta}
        if not derivatives:
            return out, {}, {}
        df = -power * (1.0 - d) ** (power - 1.0)
        dQ = b1 * (1.0 + 2.0 * b2 * d + 3.0 * b2 * b3 * d * d)
        per_D2 = scale / (D * D)
        # d(f / D) = (Q df - f dQ) / D^2
        jac = {"degradation": {"phase": (df * Q - f * dQ) * per_D2}}
        through_Q = -f * per_D2
        pjac = {
            "degradation": {
                "power": Q * f_log * per_D2,
                "b1": through_Q * d * inner,
                "b2": through_Q * b1 * d * (d + b3 * d * d),
                "b3": through_Q * b1 * b2 * d * d * d,
            }
        }
        return out, jac, pjac


#: The decompositions NEML2 3.1.0 names.
DECOMPOSITIONS = ("NONE", "VOLDEV", "SPECTRAL")


@register
class LinearIsotropicStrainEnergyDensity(Leaf):
    """The linear isotropic strain energy density of ``strain`` (SR2), split into
    ``active_strain_energy_density`` (the part that drives fracture) and
    ``inactive_strain_energy_density``.

    ``psi = K/2 tr(e)^2 + G dev(e):dev(e)`` with the bulk and shear moduli K and G from
    ``coefficients`` / ``coefficient_types`` (two distinct elastic constants). By
    ``decomposition``: ``NONE`` (default), all of it active; ``VOLDEV``, the
    volumetric part of a compressive strain (``tr(e) < 0``) inactive,
    ``K/2 <-tr(e)>^2``, and the rest active. NEML2 3.1.0 names ``SPECTRAL`` but does not
    implement it (it raises when evaluated); it is refused here when the model is built.
    """

    type_name = "LinearIsotropicStrainEnergyDensity"
    options = frozenset(
        {
            "strain",
            "active_strain_energy_density",
            "inactive_strain_energy_density",
            "coefficients",
            "coefficient_types",
            "decomposition",
        }
    )

    def __init__(
        self,
        name: str,
        names: Mapping[str, str],
        coefficients: Mapping[str, float],
        decomposition: str = "NONE",
    ) -> None:
        if decomposition not in ("NONE", "VOLDEV"):
            raise ValueError(f"unsupported decomposition '{decomposition}'")
        self.names = dict(names)
        self.split = decomposition == "VOLDEV"
        #: parameter name -> symbol (E, nu, K, G, lambda), in input-file order.
        self.symbols = {f"{name}.{symbol}": symbol for symbol in coefficients}
        params = {
            f"{name}.{symbol}": torch.tensor(float(value), dtype=Model.dtype)
            for symbol, value in coefficients.items()
        }
        super().__init__(
            name,
            [Variable(self.names["strain"], SR2)],
            [
                Variable(self.names["active_strain_energy_density"], SCALAR),
                Variable(self.names["inactive_strain_energy_density"], SCALAR),
            ],
            params,
        )

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        names = {
            key: variable_name(section, key, key)
            for key in (
                "strain",
                "active_strain_energy_density",
                "inactive_strain_energy_density",
            )
        }
        check_distinct(section, names)
        types = coefficient_types(section, 2)
        values = section.numbers("coefficients", count=2)
        decomposition = section.string("decomposition", "NONE").strip()
        if decomposition not in DECOMPOSITIONS:
            raise section.error(
                "decomposition",
                f"parameter 'decomposition': unknown decomposition '{decomposition}'; "
                f"expected one of: {', '.join(DECOMPOSITIONS)}",
            )
        if decomposition == "SPECTRAL":
            raise section.error(
                "decomposition",
                "parameter 'decomposition': 'SPECTRAL' is not supported (NEML2 3.1.0 does "
                "not implement it either); use NONE or VOLDEV",
            )
        return cls(section.name, names, dict(zip(types, values, strict=True)), decomposition)

    def _moduli(self, p: Mapping[str, torch.Tensor]) -> tuple[Dual, Dual]:
        """(K, G) with their derivatives in the stored constants."""
        names = list(self.symbols)
        seeds = Dual.seeds([p[n] for n in names])
        lam, G = lame_parameters({self.symbols[n]: s for n, s in zip(names, seeds, strict=True)})
        return lam + G * (2.0 / 3.0), G

    def kernel(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        e = x[self.names["strain"]]
        K, G = self._moduli(p)
        trace = e[:, 0] + e[:, 1] + e[:, 2]
        dev = deviator(e)
        dev2 = (dev * dev).sum(-1)
        if self.split:
            t_active = torch.clamp(trace, min=0.0)
            t_inactive = trace - t_active
        else:
            t_active, t_inactive = trace, torch.zeros_like(trace)
        # each part: (volumetric factor, deviatoric factor) times K and G
        active_vol, inactive_vol = 0.5 * t_active * t_active, 0.5 * t_inactive * t_inactive
        act, inact = (
            self.names["active_strain_energy_density"],
            self.names["inactive_strain_energy_density"],
        )
        out = {act: K.value * active_vol + G.value * dev2, inact: K.value * inactive_vol}
        if not derivatives:
            return out, {}, {}
        eye = identity(e)
        strain = self.names["strain"]
        jac = {
            act: {strain: (K.value * t_active).unsqueeze(-1) * eye + 2.0 * G.value * dev},
            inact: {strain: (K.value * t_inactive).unsqueeze(-1) * eye},
        }
        pjac = {
            act: {
                n: dK * active_vol + dG * dev2
                for n, dK, dG in zip(self.symbols, K.grad, G.grad, strict=True)
            },
            inact: {n: dK * inactive_vol for n, dK in zip(self.symbols, K.grad, strict=True)},
        }
        return out, jac, pjac
