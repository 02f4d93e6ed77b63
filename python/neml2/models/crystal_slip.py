"""Crystal plasticity, slip system by slip system: the power-law slip rule, the sum of the
slip rates, the slip strengths (single-slip and dislocation-obstacle maps) and their
evolution (Voce and linear single-slip hardening, per-slip forest dislocations). The
family's overview is in :mod:`.crystal`."""

from __future__ import annotations

from collections.abc import Mapping

import torch

from ..data_blocks import CrystalGeometry
from ..hit import Section
from .base import Blocks, Leaf, Model, Tensors, Variable, check_distinct, variable_name
from .block import SCALAR, Block
from .crystal import Shape, _CrystalModel, _geometry
from .registry import register


@register
class PowerLawSlipRule(Block):
    """``slip_rates = gamma0 |r|^(n-1) r`` with ``r = resolved_shears / slip_strengths``,
    slip system by slip system."""

    type_name = "PowerLawSlipRule"
    inputs_spec = (
        ("resolved_shears", "resolved_shears", SCALAR),
        ("slip_strengths", "slip_strengths", SCALAR),
    )
    outputs_spec = (("slip_rates", "slip_rates", SCALAR),)
    params_spec = (("gamma0", None), ("n", None))

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        tau, strength = x["resolved_shears"], x["slip_strengths"]
        gamma0, n = p["gamma0"], p["n"]
        ratio = tau / strength
        shape = torch.pow(torch.abs(ratio), n - 1) * ratio
        rate = gamma0 * shape
        if not derivatives:
            return {"slip_rates": rate}, {}, {}
        f = gamma0 * torch.pow(torch.abs(ratio), n - 1)
        jac = {
            "slip_rates": {
                "resolved_shears": n * f / strength,
                "slip_strengths": -n * rate / strength,
            }
        }
        pjac = {"slip_rates": {"gamma0": shape, "n": rate * torch.log(torch.abs(ratio))}}
        return {"slip_rates": rate}, jac, pjac


@register
class SumSlipRates(Leaf):
    """``sum_slip_rates = sum_i |slip_rates_i|`` over the last sub-batch axis of
    ``slip_rates``, which ``sum_slip_rates`` no longer has."""

    type_name = "SumSlipRates"
    options = frozenset({"slip_rates", "sum_slip_rates"})

    def __init__(self, name: str, source: str, target: str, sub: Shape = ()) -> None:
        self.source, self.target, self.sub = source, target, tuple(sub)
        inputs = [Variable(source, self.sub, self.sub)]
        outputs = [Variable(target, self.sub[:-1], self.sub[:-1])]
        super().__init__(name, inputs, outputs, {})

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        names = {
            "slip_rates": variable_name(section, "slip_rates", "slip_rates"),
            "sum_slip_rates": variable_name(section, "sum_slip_rates", "sum_slip_rates"),
        }
        check_distinct(section, names)
        return cls(section.name, names["slip_rates"], names["sum_slip_rates"])

    def with_sub_batch(self, subs: Mapping[str, Shape]) -> Model:
        sub = tuple(subs.get(self.source, ()))
        if not sub:
            raise ValueError(
                f"SumSlipRates '{self.name}': '{self.source}' has no sub-batch axis to sum "
                "over (one per slip system); declare it in [Settings]/[example_batch_shape] "
                "or produce it with a model of the crystal geometry"
            )
        return SumSlipRates(self.name, self.source, self.target, sub)

    def kernel(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        g = x[self.source]
        out = {self.target: g.abs().sum(-1)}
        if not derivatives:
            return out, {}, {}
        sign = torch.sign(g)
        lead = self.sub[:-1]
        if lead:  # zero between entries of the remaining sub-batch axes
            count = 1
            for s in lead:
                count *= s
            eye = torch.eye(count, dtype=g.dtype).to(g.device).reshape((1, *lead, *lead, 1))
            sign = sign.unsqueeze(len(lead) + 1).reshape(
                (g.shape[0], *([1] * len(lead)), *lead, self.sub[-1])
            )
            block = eye * sign
        else:
            block = sign
        return out, {self.target: {self.source: block}}, {}


@register
class SingleSlipStrengthMap(_CrystalModel):
    """``slip_strengths_i = slip_hardening + constant_strength`` on every slip system."""

    type_name = "SingleSlipStrengthMap"
    spec = (
        ("slip_hardening", "slip_hardening", SCALAR, False),
        ("slip_strengths", "slip_strengths", None, True),
    )
    extra_options = frozenset({"constant_strength"})

    def __init__(
        self, name: str, names: Mapping[str, str], geometry: CrystalGeometry, value: float
    ) -> None:
        super().__init__(name, names, geometry)
        self.parameters = {f"{name}.constant_strength": torch.tensor(value, dtype=self.dtype)}

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        names = {k: variable_name(section, k, d) for k, d, _, _ in cls.spec}
        check_distinct(section, names)
        return cls(section.name, names, _geometry(section), section.number("constant_strength"))

    def kernel(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        tau = x[self.names["slip_hardening"]]
        c = p[f"{self.name}.constant_strength"]
        ones = torch.ones((tau.shape[0], self.nslip), dtype=tau.dtype, device=tau.device)
        out = {self.names["slip_strengths"]: (tau + c).unsqueeze(-1) * ones}
        if not derivatives:
            return out, {}, {}
        name = self.names["slip_strengths"]
        return (
            out,
            {name: {self.names["slip_hardening"]: ones}},
            {name: {f"{self.name}.constant_strength": ones}},
        )


@register
class DislocationObstacleStrengthMap(Block):
    """``slip_strengths = constant_strength + alpha mu b sqrt(dislocation_density)``,
    slip system by slip system."""

    type_name = "DislocationObstacleStrengthMap"
    inputs_spec = (("dislocation_density", "dislocation_density", SCALAR),)
    outputs_spec = (("slip_strengths", "slip_strengths", SCALAR),)
    params_spec = (("constant_strength", None), ("alpha", None), ("mu", None), ("b", None))

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        root = torch.sqrt(x["dislocation_density"])
        alpha, mu, b = p["alpha"], p["mu"], p["b"]
        out = {"slip_strengths": p["constant_strength"] + alpha * mu * b * root}
        if not derivatives:
            return out, {}, {}
        jac = {"slip_strengths": {"dislocation_density": alpha * mu * b * 0.5 / root}}
        pjac = {
            "slip_strengths": {
                "constant_strength": torch.ones_like(root),
                "alpha": mu * b * root,
                "mu": alpha * b * root,
                "b": alpha * mu * root,
            }
        }
        return out, jac, pjac


@register
class VoceSingleSlipHardeningRule(Block):
    """``slip_hardening_rate = initial_slope (1 - slip_hardening / saturated_hardening)
    sum_slip_rates``."""

    type_name = "VoceSingleSlipHardeningRule"
    inputs_spec = (
        ("slip_hardening", "slip_hardening", SCALAR),
        ("sum_slip_rates", "sum_slip_rates", SCALAR),
    )
    outputs_spec = (("slip_hardening_rate", "slip_hardening_rate", SCALAR),)
    params_spec = (("initial_slope", None), ("saturated_hardening", None))

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        tau, total = x["slip_hardening"], x["sum_slip_rates"]
        theta, tauf = p["initial_slope"], p["saturated_hardening"]
        factor = 1 - tau / tauf
        out = {"slip_hardening_rate": theta * factor * total}
        if not derivatives:
            return out, {}, {}
        jac = {
            "slip_hardening_rate": {
                "slip_hardening": -theta / tauf * total,
                "sum_slip_rates": theta * factor,
            }
        }
        pjac = {
            "slip_hardening_rate": {
                "initial_slope": factor * total,
                "saturated_hardening": theta * tau / (tauf * tauf) * total,
            }
        }
        return out, jac, pjac


@register
class LinearSingleSlipHardeningRule(Block):
    """``slip_hardening_rate = hardening_slope sum_slip_rates`` (``slip_hardening`` is an
    input that the rate does not depend on, as in NEML2)."""

    type_name = "LinearSingleSlipHardeningRule"
    inputs_spec = (
        ("slip_hardening", "slip_hardening", SCALAR),
        ("sum_slip_rates", "sum_slip_rates", SCALAR),
    )
    outputs_spec = (("slip_hardening_rate", "slip_hardening_rate", SCALAR),)
    params_spec = (("hardening_slope", None),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        total = x["sum_slip_rates"]
        theta = p["hardening_slope"]
        out = {"slip_hardening_rate": theta * total}
        if not derivatives:
            return out, {}, {}
        jac = {"slip_hardening_rate": {"sum_slip_rates": theta * torch.ones_like(total)}}
        return out, jac, {"slip_hardening_rate": {"hardening_slope": total}}


@register
class PerSlipForestDislocationEvolution(Block):
    """``dislocation_density_rate = (k1 sqrt(rho) - k2 rho) |slip_rates|`` slip system by
    slip system (``rho`` the dislocation density; the output defaults to
    ``<dislocation_density>_rate``)."""

    type_name = "PerSlipForestDislocationEvolution"
    inputs_spec = (
        ("dislocation_density", "dislocation_density", SCALAR),
        ("slip_rates", "slip_rates", SCALAR),
    )
    outputs_spec = (("dislocation_density_rate", "", SCALAR),)
    params_spec = (("k1", None), ("k2", None))

    @classmethod
    def default_names(cls, section: Section) -> dict[str, str]:
        rho = variable_name(section, "dislocation_density", "dislocation_density")
        return {
            "dislocation_density": rho,
            "slip_rates": variable_name(section, "slip_rates", "slip_rates"),
            "dislocation_density_rate": variable_name(
                section, "dislocation_density_rate", f"{rho}_rate"
            ),
        }

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        rho, g = x["dislocation_density"], x["slip_rates"]
        k1, k2 = p["k1"], p["k2"]
        root, speed = torch.sqrt(rho), torch.abs(g)
        growth = k1 * root - k2 * rho
        out = {"dislocation_density_rate": growth * speed}
        if not derivatives:
            return out, {}, {}
        jac = {
            "dislocation_density_rate": {
                "dislocation_density": (0.5 * k1 / root - k2) * speed,
                "slip_rates": growth * torch.sign(g),
            }
        }
        pjac = {"dislocation_density_rate": {"k1": root * speed, "k2": -rho * speed}}
        return out, jac, pjac
