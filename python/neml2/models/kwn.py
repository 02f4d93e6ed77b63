"""KWN (Kampmann-Wagner numerical) precipitation: the driving force of precipitation,
the nucleation barrier, critical radius, Zeldovich and kinetic factors and the nucleation
flux, the growth rate of each precipitate size bin (SFFK and rate-limited), the volume
fraction of a size distribution and the matrix concentration it leaves, with NEML2
3.1.0's type names, options, defaults and variable names.

Every variable is a Scalar and every variable key defaults to its own name. With
``x_i`` the species of a list option (``concentration_differences``, ...):

* ``ChemicalGibbsFreeEnergyDifference``: ``chemical_gibbs_free_energy = sum_i dx_i
  (mu_i - mu_i^eq)``.
* ``CurrentConcentration``: ``current_concentration = (x0 - sum_i f_i x_i^p) /
  (1 - sum_i f_i)``.
* ``IdealSolutionVolumetricDrivingForce``: ``driving_force = R T sum_k w_k
  ln(c_k / c_k^eq)``.
* ``KineticFactor``: ``kinetic_factor = 4 pi (N_a / V_m)^(4/3) R*^2 / s``.
* ``NucleationBarrierAndCriticalRadius``: ``critical_radius = 2 gamma V_m / dg`` and
  ``nucleation_barrier = 16/3 pi gamma^3 V_m^2 / dg^2`` (no inputs of its own).
* ``NucleationFluxMagnitude``: ``nucleation_flux_magnitude = Z beta N0 exp(-G* / (k T))``.
* ``PrecipitateVolumeFraction``: ``volume_fraction = sum_i 4/3 pi R_i^3 n_i`` over the
  size bins (the last sub-batch axis of ``number_density``).
* ``ProjectedDiffusivitySum``: ``projected_diffusivity_sum = sum_k dx_k^2 / (D_k
  x_k^inf)``.
* ``RateLimitedPrecipitateGrowthRate``: ``growth_rate = D / R (x - x_eq) / dx``.
* ``SFFKPrecipitationGrowthRate``: ``growth_rate = dg / (R R_g T s)``.
* ``ZeldovichFactor``: ``zeldovich_factor = V_m / (2 pi N_a R*^2) sqrt(gamma / (k T))``.

Every numeric option is a parameter: ``<block>.<option>``, or ``<block>.<option>_<i>`` for
the ``i``-th entry of a list option (``weights`` with one entry is one parameter that
every species uses). Each is a number or a ``[Tensors]`` name, whose tensor may carry the
size-bin axis (a radius per bin, for instance); the output then carries it too. The
parameters NEML2 3.1.0 lets a variable (or another model's output, ``model`` or
``model.output``) give are listed in :data:`PROMOTABLE`; such a variable becomes an input
of the model, with the parameter derivative as its Jacobian column. This family reads
them itself rather than through :data:`~.coupling.COUPLABLE`: a list option promotes
entry by entry, a promoted radius may carry the size-bin axis, and the model stays one
explicit kernel, so it compiles. Variables may carry sub-batch axes (declared in
``[Settings]/[example_batch_shape]``); every sub-batched input and per-bin parameter of a
model must have the same axes.

NEML2 clamps nothing here, and neither does this module: a value outside a model's
domain (a non-positive concentration under the logarithm, ``1 - sum f_i = 0``) gives
what the formula gives. Parameters given as values that make every evaluation of the
model non-finite in NEML2 are refused when the model is built: a zero ``diffusivities``,
``concentration_difference``, ``radius`` of a growth rate, ``gas_constant`` of the SFFK
rate, ``avogadro_number`` or ``boltzmann_constant`` of the Zeldovich factor (a division
by zero), a non-positive ``molar_volume`` or negative ``avogadro_number`` of the kinetic
factor (a fractional power of a negative number, or a division by zero) and a
non-positive ``equilibrium_concentrations`` of the driving force (the logarithm).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from typing import ClassVar

import torch

from ..hit import _NUMBER, Section
from ..tensor_blocks import resolve_tensor
from .base import Blocks, Evaluation, Model, Tensors, Variable, check_distinct
from .base import variable_name as one_name
from .coupling import _is_tensor, _resolve
from .registry import register

__all__ = [
    "PROMOTABLE",
    "ChemicalGibbsFreeEnergyDifference",
    "CurrentConcentration",
    "IdealSolutionVolumetricDrivingForce",
    "KineticFactor",
    "NucleationBarrierAndCriticalRadius",
    "NucleationFluxMagnitude",
    "PrecipitateVolumeFraction",
    "ProjectedDiffusivitySum",
    "RateLimitedPrecipitateGrowthRate",
    "SFFKPrecipitationGrowthRate",
    "ZeldovichFactor",
]

Shape = tuple[int, ...]
#: One argument of a kernel: (option key, entry index; 0 for a single option).
Address = tuple[str, int]

#: The parameters NEML2 3.1.0 lets a variable (or another model's output) give, by type;
#: the others must be values.
PROMOTABLE: dict[str, tuple[str, ...]] = {
    "ChemicalGibbsFreeEnergyDifference": ("chemical_potentials", "equilibrium_potentials"),
    "CurrentConcentration": ("initial_concentration", "precipitate_concentrations"),
    "IdealSolutionVolumetricDrivingForce": ("equilibrium_concentrations",),
    "KineticFactor": ("molar_volume", "avogadro_number"),
    "NucleationBarrierAndCriticalRadius": ("surface_energy", "total_gibbs_free_energy_difference"),
    "NucleationFluxMagnitude": ("nucleation_site_density",),
    "PrecipitateVolumeFraction": ("radius",),
    "ProjectedDiffusivitySum": ("concentration_differences", "diffusivities"),
    "RateLimitedPrecipitateGrowthRate": (
        "radius",
        "equilibrium_concentration",
        "concentration_difference",
        "diffusivity",
    ),
    "SFFKPrecipitationGrowthRate": ("radius", "gibbs_free_energy_difference", "gas_constant"),
    "ZeldovichFactor": ("surface_energy",),
}


class _Kwn(Model):
    """A KWN model declared by tables.

    ``inputs_spec`` and ``outputs_spec`` are the Scalar variable keys (each defaulting to
    its own name), ``list_input`` the key of a list of input variables (one per species)
    if any, ``params_spec`` the parameter keys with ``"one"`` or ``"list"`` (one entry per
    species) and ``defaults`` the default value of an optional parameter. :meth:`compute`
    gets every argument by :data:`Address` and returns the outputs by key with their
    partial derivatives by address, elementwise (each broadcasts to the output).
    """

    inputs_spec: ClassVar[tuple[str, ...]] = ()
    list_input: ClassVar[str | None] = None
    outputs_spec: ClassVar[tuple[str, ...]] = ()
    params_spec: ClassVar[tuple[tuple[str, str], ...]] = ()
    defaults: ClassVar[dict[str, str]] = {}
    #: parameters whose values may not be zero / must be positive / may not be negative
    #: (refused at build)
    nonzero: ClassVar[frozenset[str]] = frozenset()
    positive: ClassVar[frozenset[str]] = frozenset()
    nonnegative: ClassVar[frozenset[str]] = frozenset()
    #: whether the output sums the last sub-batch axis (the size bins)
    reduces: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        keys = {*cls.inputs_spec, *cls.outputs_spec, *(k for k, _ in cls.params_spec)}
        if cls.list_input:
            keys.add(cls.list_input)
        cls.options = frozenset(keys)

    def __init__(
        self,
        name: str,
        names: Mapping[str, str],
        species: Sequence[str],
        sources: Mapping[str, Sequence[tuple[str, str]]],
        parameters: Mapping[str, torch.Tensor],
        providers: Sequence[str] = (),
    ) -> None:
        #: key -> variable name of each single input and output
        self.names = dict(names)
        #: the variables of ``list_input``, in order
        self.species = list(species)
        #: parameter key -> per entry ("x", variable) or ("p", parameter name)
        self.sources = {k: list(v) for k, v in sources.items()}
        #: the [Models] blocks that compute promoted parameters
        self.providers = list(providers)
        order = [self.names[k] for k in self.inputs_spec] + self.species
        for entries in self.sources.values():
            order += [v for kind, v in entries if kind == "x"]
        self.input_names = list(dict.fromkeys(order))
        self.var_sub: dict[str, Shape] = {}
        super().__init__(name, [], [], parameters)
        self._shape()

    # --- building ---------------------------------------------------------------------

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        names = {k: one_name(section, k, k) for k in (*cls.inputs_spec, *cls.outputs_spec)}
        check_distinct(section, names)
        species: list[str] = []
        if cls.list_input is not None:
            species = section.strings(cls.list_input)
            if not species:
                raise section.error(
                    cls.list_input,
                    f"parameter '{cls.list_input}': expected at least one variable name",
                )
        promotable = PROMOTABLE[cls.type_name]
        sources: dict[str, list[tuple[str, str]]] = {}
        parameters: dict[str, torch.Tensor] = {}
        providers: list[str] = []
        for key, kind in cls.params_spec:
            if key in section.params:
                words = section.strings(key)
            elif key in cls.defaults:
                words = cls.defaults[key].split()
            else:
                raise section.error(
                    None, f"[{section.full_name}]: missing required parameter '{key}'"
                )
            if kind == "one" and len(words) != 1:
                raise section.error(key, f"parameter '{key}': expected one value, got {len(words)}")
            entries: list[tuple[str, str]] = []
            for index, word in enumerate(words):
                pname = (
                    f"{section.name}.{key}" if kind == "one" else f"{section.name}.{key}_{index}"
                )
                value = _value(section, key, word)
                if value is not None:
                    cls._check_value(section, key, value)
                    parameters[pname] = value
                    entries.append(("p", pname))
                    continue
                if key not in promotable:
                    raise section.error(
                        key,
                        f"parameter '{key}': expected a number or a [Tensors] name, got "
                        f"'{word}' (NEML2 3.1.0 does not let a variable give it)",
                    )
                variable, provider, shape = _resolve(section, key, word)
                if shape not in (None, ()):
                    raise section.error(
                        key,
                        f"parameter '{key}': '{word}' has shape {shape}, expected a Scalar",
                    )
                if variable in {names[k] for k in cls.outputs_spec}:
                    raise section.error(
                        key, f"parameter '{key}': '{variable}' is an output of this model"
                    )
                if provider is not None and provider not in providers:
                    providers.append(provider)
                entries.append(("x", variable))
            sources[key] = cls._entries(section, key, entries, len(species))
        outputs = {names[k] for k in cls.outputs_spec}
        for variable in species:
            if variable in outputs:
                raise section.error(
                    cls.list_input,
                    f"parameter '{cls.list_input}': '{variable}' is an output of this model",
                )
        return cls(section.name, names, species, sources, parameters, providers)

    @classmethod
    def _entries(
        cls, section: Section, key: str, entries: list[tuple[str, str]], count: int
    ) -> list[tuple[str, str]]:
        """The entries of list parameter ``key``, one per species."""
        if dict(cls.params_spec)[key] == "one":
            return entries
        if len(entries) == count:
            return entries
        if key == "weights" and len(entries) == 1:
            return entries * count
        expected = f"1 or {count}" if key == "weights" else f"{count}"
        raise section.error(
            key,
            f"parameter '{key}': expected {expected} entries (one per variable of "
            f"'{cls.list_input}'), got {len(entries)}",
        )

    @classmethod
    def _check_value(cls, section: Section, key: str, value: torch.Tensor) -> None:
        if key in cls.positive and bool((value <= 0).any()):
            raise section.error(
                key, f"parameter '{key}': expected positive values, got {value.tolist()}"
            )
        if key in cls.nonnegative and bool((value < 0).any()):
            raise section.error(
                key, f"parameter '{key}': expected nonnegative values, got {value.tolist()}"
            )
        if key in cls.nonzero and bool((value == 0).any()):
            raise section.error(
                key, f"parameter '{key}': expected nonzero values, got {value.tolist()}"
            )

    # --- sub-batch axes ---------------------------------------------------------------

    def _shape(self) -> None:
        """Set the common sub-batch axes of the arguments and the variables' shapes."""
        given = {f"input '{n}'": s for n, s in self.var_sub.items() if s}
        for key, entries in self.sources.items():
            for kind, name in entries:
                if kind == "p" and self.parameters[name].dim():
                    given[f"parameter '{key}'"] = tuple(self.parameters[name].shape)
        shapes = set(given.values())
        if len(shapes) > 1:
            listed = ", ".join(f"{w} {s}" for w, s in given.items())
            raise ValueError(
                f"{self.type_name} '{self.name}': its arguments have different sub-batch "
                f"axes ({listed}); they must share one shape"
            )
        self.sub: Shape = shapes.pop() if shapes else ()
        out = self.sub[:-1] if self.reduces else self.sub
        self.inputs = [
            Variable(n, self.var_sub.get(n, ()), self.var_sub.get(n, ())) for n in self.input_names
        ]
        self.outputs = [Variable(self.names[k], out, out) for k in self.outputs_spec]

    def with_sub_batch(self, subs: Mapping[str, Shape]) -> Model:
        own = {n: tuple(subs[n]) for n in self.input_names if subs.get(n)}
        if own == self.var_sub:
            return self
        shaped = copy.copy(self)
        shaped.var_sub = own
        shaped._shape()
        return shaped

    # --- evaluation -------------------------------------------------------------------

    def compute(
        self, v: Mapping[Address, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, dict[str, dict[Address, torch.Tensor]]]:
        """The outputs by key and their partials by argument (every argument is a value
        broadcastable to ``(B, *sub)``); the partials may be skipped unless
        ``derivatives``."""
        raise NotImplementedError

    def param_jacobian_batched(self, of: str, param: str) -> bool:
        return bool(self.inputs)

    def evaluate(
        self,
        x: Mapping[str, torch.Tensor],
        p: Mapping[str, torch.Tensor],
        jacobian: bool = False,
        param_jacobian: bool = False,
    ) -> Evaluation:
        n = next(iter(x.values())).shape[0] if x else 1
        k = len(self.sub)
        if self.reduces and (k != 1 or not self.var_sub.get(self.names[self.inputs_spec[0]])):
            raise ValueError(
                f"{self.type_name} '{self.name}': '{self.names[self.inputs_spec[0]]}' needs "
                f"one sub-batch axis (the size bins), declared in "
                f"[Settings]/[example_batch_shape]"
            )
        like = next(iter(p.values()), None) if not x else next(iter(x.values()))

        def lift(name: str) -> torch.Tensor:
            value = x[name]
            return value.reshape((n,) + (1,) * k) if k and not self.var_sub.get(name) else value

        where: dict[Address, tuple[str, str]] = {}
        for key in self.inputs_spec:
            where[(key, 0)] = ("x", self.names[key])
        if self.list_input is not None:
            for i, name in enumerate(self.species):
                where[(self.list_input, i)] = ("x", name)
        for key, entries in self.sources.items():
            for i, entry in enumerate(entries):
                where[(key, i)] = entry
        v = {a: lift(name) if kind == "x" else p[name] for a, (kind, name) in where.items()}
        wanted = jacobian or param_jacobian
        out, partials = self.compute(v, wanted)
        full = (n, *self.sub)
        out_sub = self.sub[:-1] if self.reduces else self.sub
        ev = Evaluation({self.names[o]: _broadcast(t, (n, *out_sub)) for o, t in out.items()})
        if not wanted:
            return ev
        assert like is not None
        jac: Blocks = {}
        pjac: Blocks = {}
        for o in self.outputs_spec:
            rows: dict[str, dict[str, torch.Tensor]] = {"x": {}, "p": {}}
            for address, g in partials.get(o, {}).items():
                kind, name = where[address]
                sub = self.var_sub.get(name, ()) if kind == "x" else tuple(p[name].shape)
                g = _broadcast(g, full)
                block = _block(g, bool(sub), self.reduces)
                row = rows[kind]
                row[name] = row[name] + block if name in row else block
            of = self.names[o]
            jac[of] = {
                i.name: rows["x"].get(i.name, like.new_zeros((n, *out_sub, *i.shape)))
                for i in self.inputs
            }
            pjac[of] = {
                q: rows["p"].get(q, like.new_zeros((n, *out_sub, *p[q].shape)))
                for q in self.parameters
            }
        if jacobian:
            ev.jacobian = jac
        if param_jacobian:
            batched = bool(self.inputs)
            ev.param_jacobian = {
                o: {q: b if batched else b[0] for q, b in row.items()} for o, row in pjac.items()
            }
        return ev


def _value(section: Section, key: str, word: str) -> torch.Tensor | None:
    """The value of one word of a parameter option (a number or a [Tensors] Scalar,
    which may carry leading axes), or None when the word names a variable or a model."""
    if _NUMBER.fullmatch(word):
        return torch.tensor(section.finite(key, word), dtype=Model.dtype)
    if _is_tensor(section, word):
        value = resolve_tensor(section, key, word, "Scalar").clone()
        if not bool(torch.isfinite(value).all()):
            raise section.error(key, f"parameter '{key}': '{word}' holds a non-finite value")
        return value
    return None


def _broadcast(value: torch.Tensor, shape: Shape) -> torch.Tensor:
    return torch.broadcast_to(value, shape).contiguous()


def _block(g: torch.Tensor, sub: bool, reduces: bool) -> torch.Tensor:
    """The Jacobian block of elementwise partials ``g`` ``(B, *sub)`` for an argument with
    (``sub``) or without the sub-batch axes, of an output that keeps them or sums the
    last one (``reduces``)."""
    if reduces:
        return g if sub else g.sum(-1)
    return _diagonal(g) if sub else g


def _diagonal(g: torch.Tensor) -> torch.Tensor:
    """``(B, *sub)`` entries as the diagonal of ``(B, *sub, *sub)``."""
    sub = tuple(g.shape[1:])
    flat = torch.diag_embed(g.reshape(g.shape[0], -1))
    return flat.reshape((g.shape[0], *sub, *sub))


def _total(terms: Sequence[torch.Tensor]) -> torch.Tensor:
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return total


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
