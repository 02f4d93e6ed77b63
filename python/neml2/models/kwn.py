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

This module holds the family's base class and :data:`PROMOTABLE`; the types are in
:mod:`.kwn_nucleation` (driving force and nucleation) and :mod:`.kwn_growth` (growth
rates, volume fraction and matrix concentration).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import ClassVar

import torch

from ..hit import _NUMBER, Section
from ..tensor_blocks import resolve_tensor
from .base import Blocks, Evaluation, Model, Tensors, Variable, check_distinct
from .base import variable_name as one_name
from .coupling import _is_tensor, _resolve

__all__ = ["PROMOTABLE"]

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
