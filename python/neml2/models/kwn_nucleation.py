"""KWN precipitation, the driving force and nucleation: the chemical Gibbs free energy
difference, the ideal-solution volumetric driving force, the nucleation barrier and
critical radius, the Zeldovich and kinetic factors and the nucleation flux. The family's
base class, its options and :data:`~.kwn.PROMOTABLE` are in :mod:`.kwn`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import ClassVar

import torch

from .base import Tensors
from .kwn import Address, _Kwn, _total
from .registry import register

__all__ = [
    "ChemicalGibbsFreeEnergyDifference",
    "IdealSolutionVolumetricDrivingForce",
    "KineticFactor",
    "NucleationBarrierAndCriticalRadius",
    "NucleationFluxMagnitude",
    "ZeldovichFactor",
]


@register
class ChemicalGibbsFreeEnergyDifference(_Kwn):
    """``chemical_gibbs_free_energy = sum_i dx_i (mu_i - mu_i^eq)`` of the
    ``concentration_differences`` ``dx_i`` (inputs), with the ``chemical_potentials``
    ``mu_i`` and ``equilibrium_potentials`` ``mu_i^eq`` (one each per species)."""

    type_name = "ChemicalGibbsFreeEnergyDifference"
    list_input = "concentration_differences"
    outputs_spec = ("chemical_gibbs_free_energy",)
    params_spec = (("chemical_potentials", "list"), ("equilibrium_potentials", "list"))

    def compute(
        self, v: Mapping[Address, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, dict[str, dict[Address, torch.Tensor]]]:
        count = len(self.species)
        dx = [v[("concentration_differences", i)] for i in range(count)]
        mu = [v[("chemical_potentials", i)] for i in range(count)]
        eq = [v[("equilibrium_potentials", i)] for i in range(count)]
        gap = [a - b for a, b in zip(mu, eq, strict=True)]
        g = _total([c * d for c, d in zip(gap, dx, strict=True)])
        d: dict[Address, torch.Tensor] = {}
        for i in range(count):
            d[("concentration_differences", i)] = gap[i]
            d[("chemical_potentials", i)] = dx[i]
            d[("equilibrium_potentials", i)] = -dx[i]
        return {"chemical_gibbs_free_energy": g}, {"chemical_gibbs_free_energy": d}


@register
class IdealSolutionVolumetricDrivingForce(_Kwn):
    """``driving_force = R T sum_k w_k ln(c_k / c_k^eq)`` of the ``temperature`` ``T`` and
    the ``current_concentrations`` ``c_k`` (inputs), with the ``gas_constant`` ``R``, the
    ``equilibrium_concentrations`` ``c_k^eq`` (one per species) and the ``weights``
    ``w_k`` (one, used for every species, or one per species; default 1)."""

    type_name = "IdealSolutionVolumetricDrivingForce"
    inputs_spec = ("temperature",)
    list_input = "current_concentrations"
    outputs_spec = ("driving_force",)
    params_spec = (
        ("gas_constant", "one"),
        ("equilibrium_concentrations", "list"),
        ("weights", "list"),
    )
    defaults: ClassVar[dict[str, str]] = {"weights": "1"}
    positive = frozenset({"equilibrium_concentrations"})

    def compute(
        self, v: Mapping[Address, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, dict[str, dict[Address, torch.Tensor]]]:
        count = len(self.species)
        c = [v[("current_concentrations", i)] for i in range(count)]
        ceq = [v[("equilibrium_concentrations", i)] for i in range(count)]
        w = [v[("weights", i)] for i in range(count)]
        T, R = v[("temperature", 0)], v[("gas_constant", 0)]
        logs = [torch.log(a / b) for a, b in zip(c, ceq, strict=True)]
        total = _total([a * b for a, b in zip(w, logs, strict=True)])
        RT = R * T
        d: dict[Address, torch.Tensor] = {
            ("temperature", 0): R * total,
            ("gas_constant", 0): T * total,
        }
        for i in range(count):
            d[("current_concentrations", i)] = RT * w[i] / c[i]
            d[("equilibrium_concentrations", i)] = -RT * w[i] / ceq[i]
            d[("weights", i)] = RT * logs[i]
        return {"driving_force": RT * total}, {"driving_force": d}


@register
class NucleationBarrierAndCriticalRadius(_Kwn):
    """``critical_radius = 2 gamma V_m / dg`` and ``nucleation_barrier = 16/3 pi gamma^3
    V_m^2 / dg^2``, with the ``surface_energy`` ``gamma``, the
    ``total_gibbs_free_energy_difference`` ``dg`` and the ``molar_volume`` ``V_m``; the
    model has no inputs unless a variable gives ``gamma`` or ``dg``."""

    type_name = "NucleationBarrierAndCriticalRadius"
    outputs_spec = ("nucleation_barrier", "critical_radius")
    params_spec = (
        ("surface_energy", "one"),
        ("total_gibbs_free_energy_difference", "one"),
        ("molar_volume", "one"),
    )

    def compute(
        self, v: Mapping[Address, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, dict[str, dict[Address, torch.Tensor]]]:
        gamma = v[("surface_energy", 0)]
        dg = v[("total_gibbs_free_energy_difference", 0)]
        Vm = v[("molar_volume", 0)]
        R = 2.0 * gamma * Vm / dg
        c = 16.0 / 3.0 * math.pi
        # products rather than ** 3: Inductor cannot lower the power of a baked constant
        gamma3 = gamma * gamma * gamma
        barrier = c * gamma3 * Vm * Vm / (dg * dg)
        db = {
            ("surface_energy", 0): 3.0 * c * gamma * gamma * Vm * Vm / (dg * dg),
            ("total_gibbs_free_energy_difference", 0): -2.0 * barrier / dg,
            ("molar_volume", 0): 2.0 * c * gamma3 * Vm / (dg * dg),
        }
        dR = {
            ("surface_energy", 0): 2.0 * Vm / dg,
            ("total_gibbs_free_energy_difference", 0): -R / dg,
            ("molar_volume", 0): 2.0 * gamma / dg,
        }
        out = {"nucleation_barrier": barrier, "critical_radius": R}
        return out, {"nucleation_barrier": db, "critical_radius": dR}


@register
class ZeldovichFactor(_Kwn):
    """``zeldovich_factor = V_m / (2 pi N_a R*^2) sqrt(gamma / (k T))`` of the
    ``critical_radius`` ``R*`` and the ``temperature`` ``T`` (inputs), with the
    ``surface_energy`` ``gamma``, the ``molar_volume`` ``V_m``, the ``avogadro_number``
    ``N_a`` and the ``boltzmann_constant`` ``k``."""

    type_name = "ZeldovichFactor"
    inputs_spec = ("critical_radius", "temperature")
    outputs_spec = ("zeldovich_factor",)
    params_spec = (
        ("surface_energy", "one"),
        ("molar_volume", "one"),
        ("avogadro_number", "one"),
        ("boltzmann_constant", "one"),
    )
    nonzero = frozenset({"avogadro_number", "boltzmann_constant"})

    def compute(
        self, v: Mapping[Address, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, dict[str, dict[Address, torch.Tensor]]]:
        R, T = v[("critical_radius", 0)], v[("temperature", 0)]
        gamma, Vm = v[("surface_energy", 0)], v[("molar_volume", 0)]
        Na, k = v[("avogadro_number", 0)], v[("boltzmann_constant", 0)]
        front = 1.0 / (2.0 * math.pi * Na * R * R)  # Z / (V_m root)
        root = torch.sqrt(gamma / (k * T))
        Z = Vm * front * root
        d = {
            ("critical_radius", 0): -2.0 * Z / R,
            ("temperature", 0): -0.5 * Z / T,
            ("surface_energy", 0): 0.5 * Vm * front / torch.sqrt(gamma * k * T),
            ("molar_volume", 0): front * root,
            ("avogadro_number", 0): -Z / Na,
            ("boltzmann_constant", 0): -0.5 * Z / k,
        }
        return {"zeldovich_factor": Z}, {"zeldovich_factor": d}


@register
class KineticFactor(_Kwn):
    """``kinetic_factor = 4 pi (N_a / V_m)^(4/3) R*^2 / s`` of the ``critical_radius``
    ``R*`` and the ``projected_diffusivity_sum`` ``s`` (inputs), with the
    ``molar_volume`` ``V_m`` and the ``avogadro_number`` ``N_a``."""

    type_name = "KineticFactor"
    inputs_spec = ("critical_radius", "projected_diffusivity_sum")
    outputs_spec = ("kinetic_factor",)
    params_spec = (("molar_volume", "one"), ("avogadro_number", "one"))
    positive = frozenset({"molar_volume"})
    nonnegative = frozenset({"avogadro_number"})

    def compute(
        self, v: Mapping[Address, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, dict[str, dict[Address, torch.Tensor]]]:
        R, s = v[("critical_radius", 0)], v[("projected_diffusivity_sum", 0)]
        Vm, Na = v[("molar_volume", 0)], v[("avogadro_number", 0)]
        coef = 4.0 * math.pi * (Na / Vm) ** (4.0 / 3.0)
        beta = coef * R * R / s
        d = {
            ("critical_radius", 0): 2.0 * coef * R / s,
            ("projected_diffusivity_sum", 0): -beta / s,
            ("molar_volume", 0): -4.0 / 3.0 * beta / Vm,
            ("avogadro_number", 0): 4.0 / 3.0 * beta / Na,
        }
        return {"kinetic_factor": beta}, {"kinetic_factor": d}


@register
class NucleationFluxMagnitude(_Kwn):
    """``nucleation_flux_magnitude = Z beta N0 exp(-G* / (k T))`` of the
    ``zeldovich_factor`` ``Z``, ``kinetic_factor`` ``beta``, ``nucleation_barrier``
    ``G*`` and ``temperature`` ``T`` (inputs), with the ``nucleation_site_density``
    ``N0`` and the ``boltzmann_constant`` ``k``."""

    type_name = "NucleationFluxMagnitude"
    inputs_spec = ("zeldovich_factor", "kinetic_factor", "nucleation_barrier", "temperature")
    outputs_spec = ("nucleation_flux_magnitude",)
    params_spec = (("nucleation_site_density", "one"), ("boltzmann_constant", "one"))

    def compute(
        self, v: Mapping[Address, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, dict[str, dict[Address, torch.Tensor]]]:
        Z, beta = v[("zeldovich_factor", 0)], v[("kinetic_factor", 0)]
        G, T = v[("nucleation_barrier", 0)], v[("temperature", 0)]
        N0, k = v[("nucleation_site_density", 0)], v[("boltzmann_constant", 0)]
        kT = k * T
        e = torch.exp(-G / kT)
        J = Z * beta * N0 * e
        d = {
            ("zeldovich_factor", 0): beta * N0 * e,
            ("kinetic_factor", 0): Z * N0 * e,
            ("nucleation_barrier", 0): -J / kT,
            ("temperature", 0): J * G / (kT * T),
            ("nucleation_site_density", 0): Z * beta * e,
            ("boltzmann_constant", 0): J * G / (kT * k),
        }
        return {"nucleation_flux_magnitude": J}, {"nucleation_flux_magnitude": d}
