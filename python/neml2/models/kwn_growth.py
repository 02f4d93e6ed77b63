"""KWN precipitation, growth and mass balance: the projected diffusivity sum, the growth
rate of each size bin (SFFK and rate-limited), the volume fraction of a size distribution
and the matrix concentration it leaves. The family's base class, its options and
:data:`~.kwn.PROMOTABLE` are in :mod:`.kwn`."""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch

from .base import Tensors
from .kwn import Address, _Kwn, _total
from .registry import register

__all__ = [
    "CurrentConcentration",
    "PrecipitateVolumeFraction",
    "ProjectedDiffusivitySum",
    "RateLimitedPrecipitateGrowthRate",
    "SFFKPrecipitationGrowthRate",
]


@register
class ProjectedDiffusivitySum(_Kwn):
    """``projected_diffusivity_sum = sum_k dx_k^2 / (D_k x_k^inf)`` of the
    ``far_field_concentrations`` ``x_k^inf`` (inputs), with the
    ``concentration_differences`` ``dx_k`` and the ``diffusivities`` ``D_k`` (one each
    per species)."""

    type_name = "ProjectedDiffusivitySum"
    list_input = "far_field_concentrations"
    outputs_spec = ("projected_diffusivity_sum",)
    params_spec = (("concentration_differences", "list"), ("diffusivities", "list"))
    nonzero = frozenset({"diffusivities"})

    def compute(
        self, v: Mapping[Address, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, dict[str, dict[Address, torch.Tensor]]]:
        count = len(self.species)
        x = [v[("far_field_concentrations", i)] for i in range(count)]
        dx = [v[("concentration_differences", i)] for i in range(count)]
        D = [v[("diffusivities", i)] for i in range(count)]
        terms = [a * a / (b * c) for a, b, c in zip(dx, D, x, strict=True)]
        d: dict[Address, torch.Tensor] = {}
        for i in range(count):
            d[("far_field_concentrations", i)] = -terms[i] / x[i]
            d[("concentration_differences", i)] = 2.0 * dx[i] / (D[i] * x[i])
            d[("diffusivities", i)] = -terms[i] / D[i]
        return {"projected_diffusivity_sum": _total(terms)}, {"projected_diffusivity_sum": d}


@register
class SFFKPrecipitationGrowthRate(_Kwn):
    """``growth_rate = dg / (R R_g T s)`` of the ``projected_diffusivity_sum`` ``s`` and
    the ``temperature`` ``T`` (inputs), with the ``radius`` ``R`` (per size bin), the
    ``gibbs_free_energy_difference`` ``dg`` and the ``gas_constant`` ``R_g``."""

    type_name = "SFFKPrecipitationGrowthRate"
    inputs_spec = ("projected_diffusivity_sum", "temperature")
    outputs_spec = ("growth_rate",)
    params_spec = (
        ("radius", "one"),
        ("gibbs_free_energy_difference", "one"),
        ("gas_constant", "one"),
    )
    nonzero = frozenset({"radius", "gas_constant"})

    def compute(
        self, v: Mapping[Address, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, dict[str, dict[Address, torch.Tensor]]]:
        s, T = v[("projected_diffusivity_sum", 0)], v[("temperature", 0)]
        R, dg = v[("radius", 0)], v[("gibbs_free_energy_difference", 0)]
        Rg = v[("gas_constant", 0)]
        per = 1.0 / (R * Rg * T * s)  # d rate / d dg
        rate = dg * per
        d = {
            ("projected_diffusivity_sum", 0): -rate / s,
            ("temperature", 0): -rate / T,
            ("radius", 0): -rate / R,
            ("gibbs_free_energy_difference", 0): per,
            ("gas_constant", 0): -rate / Rg,
        }
        return {"growth_rate": rate}, {"growth_rate": d}


@register
class RateLimitedPrecipitateGrowthRate(_Kwn):
    """``growth_rate = D / R (x - x_eq) / dx`` of the ``current_concentration`` ``x``
    (input), with the ``radius`` ``R`` (per size bin), the ``equilibrium_concentration``
    ``x_eq``, the ``concentration_difference`` ``dx`` and the ``diffusivity`` ``D``."""

    type_name = "RateLimitedPrecipitateGrowthRate"
    inputs_spec = ("current_concentration",)
    outputs_spec = ("growth_rate",)
    params_spec = (
        ("radius", "one"),
        ("equilibrium_concentration", "one"),
        ("concentration_difference", "one"),
        ("diffusivity", "one"),
    )
    nonzero = frozenset({"radius", "concentration_difference"})

    def compute(
        self, v: Mapping[Address, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, dict[str, dict[Address, torch.Tensor]]]:
        x, R = v[("current_concentration", 0)], v[("radius", 0)]
        xeq, dx = v[("equilibrium_concentration", 0)], v[("concentration_difference", 0)]
        D = v[("diffusivity", 0)]
        per = D / (R * dx)  # d rate / dx
        excess = x - xeq
        rate = per * excess
        d = {
            ("current_concentration", 0): per,
            ("equilibrium_concentration", 0): -per,
            ("concentration_difference", 0): -rate / dx,
            ("radius", 0): -rate / R,
            ("diffusivity", 0): excess / (R * dx),
        }
        return {"growth_rate": rate}, {"growth_rate": d}


@register
class PrecipitateVolumeFraction(_Kwn):
    """``volume_fraction = sum_i 4/3 pi R_i^3 n_i`` of the ``number_density`` ``n_i``
    (the input, with the size bins as its last sub-batch axis), with the ``radius``
    ``R_i`` (one value, one per bin, or a variable with or without the bin axis)."""

    type_name = "PrecipitateVolumeFraction"
    inputs_spec = ("number_density",)
    outputs_spec = ("volume_fraction",)
    params_spec = (("radius", "one"),)
    reduces = True

    def compute(
        self, v: Mapping[Address, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, dict[str, dict[Address, torch.Tensor]]]:
        nd, R = v[("number_density", 0)], v[("radius", 0)]
        c = 4.0 / 3.0 * math.pi
        per_bin = c * R * R * R  # not R ** 3, which Inductor cannot lower for a constant
        f = (per_bin * nd).sum(-1)
        d = {("number_density", 0): per_bin, ("radius", 0): 3.0 * c * R * R * nd}
        return {"volume_fraction": f}, {"volume_fraction": d}


@register
class CurrentConcentration(_Kwn):
    """``current_concentration = (x0 - sum_i f_i x_i^p) / (1 - sum_i f_i)`` of the
    ``precipitate_volume_fractions`` ``f_i`` (inputs), with the ``initial_concentration``
    ``x0`` and the ``precipitate_concentrations`` ``x_i^p`` (one per precipitate)."""

    type_name = "CurrentConcentration"
    list_input = "precipitate_volume_fractions"
    outputs_spec = ("current_concentration",)
    params_spec = (("initial_concentration", "one"), ("precipitate_concentrations", "list"))

    def compute(
        self, v: Mapping[Address, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, dict[str, dict[Address, torch.Tensor]]]:
        count = len(self.species)
        f = [v[("precipitate_volume_fractions", i)] for i in range(count)]
        xp = [v[("precipitate_concentrations", i)] for i in range(count)]
        x0 = v[("initial_concentration", 0)]
        rest = 1.0 - _total(f)
        x = (x0 - _total([a * b for a, b in zip(f, xp, strict=True)])) / rest
        d: dict[Address, torch.Tensor] = {("initial_concentration", 0): 1.0 / rest}
        for i in range(count):
            d[("precipitate_volume_fractions", i)] = (x - xp[i]) / rest
            d[("precipitate_concentrations", i)] = -f[i] / rest
        return {"current_concentration": x}, {"current_concentration": d}
