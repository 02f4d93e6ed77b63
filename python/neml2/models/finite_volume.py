"""Finite-volume transport on one sub-batch axis: the building blocks of a 1D
advection-diffusion right-hand side per material point (cells along the axis, their
edges, a source), with NEML2 3.1.0's type names, options, defaults and variable names.

A field with one value per cell is a Scalar with one sub-batch axis of ``N`` entries
(see :mod:`.sub_batch`); a value per interior edge has ``N - 1`` entries, a value per
edge boundary edges included ``N + 1``. With ``u`` the cell values, ``x`` the cell
centers, ``xe`` the edges (``xe_0 < x_0 < xe_1 < ... < x_(N-1) < xe_N``):

* ``LinearlyInterpolateToCellEdges``: ``q_e,i = w_l q_i + w_r q_(i+1)``, ``w_l =
  (x_(i+1) - xe_(i+1)) / (x_(i+1) - x_i)``, ``w_r = 1 - w_l``, ``i < N - 1`` (interior
  edges).
* ``FiniteVolumeUpwindedAdvectiveFlux``: ``J_i = v_i (H(v_i) u_i + (1 - H(v_i))
  u_(i+1))`` at the interior edges, ``H`` the Heaviside step with ``H(0) = 1/2``.
* ``FiniteVolumeAppendBoundaryCondition``: ``[b, u_0, ..., u_(N-1)]`` (left) or ``[u_0,
  ..., u_(N-1), b]`` (right): one entry more.
* ``FiniteVolumeGradient``: ``g_i = -p_i (u_(i+1) - u_i) / dx``: one entry fewer.
* ``SmearedDeltaSource``: ``s_k = m / (w sqrt(2 pi)) exp(-((x_k - l) / w)^2 / 2)``, a
  Gaussian of width ``w`` about the location ``l`` sampled at the cell centers.
* ``DumpInSmallestBin``: ``[m, 0, ..., 0]``, one entry per cell center.
* ``SemiInfiniteCoordinateTransform``: ``x / (x + s)``, point by point.

Every option of a parameter is a number or a ``[Tensors]`` name; those NEML2 3.1.0 lets a
variable (or another model's output) give are listed in :data:`PROMOTABLE`. Per-cell
parameters (``cell_centers``, ``cell_edges``, ``cell_values``) are ``[Tensors]`` with
one leading axis of ``N`` (``N + 1`` for the edges) values; a variable that gives one
carries that sub-batch axis. ``prefactor`` is one value or one per interior edge of
``u``. ``dx`` and ``bc_value`` are one value each. The derivative blocks are dense over
the cells: ``d g / d u`` is ``(N - 1, N)`` per point.

This module holds ``SemiInfiniteCoordinateTransform``, :data:`PROMOTABLE` and the base
class of the models along the cell axis; :mod:`.finite_volume_fluxes` holds the models
between cells and edges, :mod:`.finite_volume_sources` the sources.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import torch
from torch.nn.functional import pad

from ..errors import Neml2Error
from ..hit import _NUMBER, Section
from .base import (
    Blocks,
    Evaluation,
    Model,
    Tensors,
    Variable,
    check_distinct,
    tensor_option,
    variable_name,
)
from .block import SCALAR
from .coupling import COUPLABLE, _is_tensor, _resolve
from .kinematics import ScalarOptions
from .registry import register

__all__ = [
    "PROMOTABLE",
    "SemiInfiniteCoordinateTransform",
]

Shape = tuple[int, ...]

#: The parameters NEML2 3.1.0 lets a variable (or another model's output) give, by type.
#: ``SemiInfiniteCoordinateTransform`` works point by point and couples its ``shift`` as
#: any other model does (:mod:`.coupling`); the others take a coupled parameter as one
#: more input of their own, with or without a sub-batch axis.
PROMOTABLE: dict[str, tuple[str, ...]] = {
    "DumpInSmallestBin": ("cell_centers",),
    "FiniteVolumeGradient": ("prefactor",),
    "LinearlyInterpolateToCellEdges": ("cell_values",),
    "SemiInfiniteCoordinateTransform": ("shift",),
    "SmearedDeltaSource": ("width", "cell_centers"),
}
COUPLABLE.update({"SemiInfiniteCoordinateTransform": PROMOTABLE["SemiInfiniteCoordinateTransform"]})


@register
class SemiInfiniteCoordinateTransform(ScalarOptions):
    """``transformed_coordinate = coordinate / (coordinate + shift)``, which maps
    ``[0, inf)`` onto ``[0, 1)`` for a positive shift."""

    type_name = "SemiInfiniteCoordinateTransform"
    inputs_spec = (("coordinate", "coordinate", SCALAR),)
    outputs_spec = (("transformed_coordinate", "state/x_hat", SCALAR),)
    params_spec = (("shift", None),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        r, s = x["coordinate"], p["shift"]
        inv = 1.0 / (r + s)
        out = {"transformed_coordinate": r * inv}
        if not derivatives:
            return out, {}, {}
        inv2 = inv * inv
        jac = {"transformed_coordinate": {"coordinate": s * inv2}}
        return out, jac, {"transformed_coordinate": {"shift": -r * inv2}}


# ---------------------------------------------------------------------------------------
# models along the cell axis
# ---------------------------------------------------------------------------------------


def _diag(g: torch.Tensor) -> torch.Tensor:
    """``(B, M)`` as the diagonal blocks ``(B, M, M)``."""
    return torch.diag_embed(g)


def _elementwise(g: torch.Tensor, arg: torch.Tensor) -> torch.Tensor:
    """The block of ``out_i`` by ``arg``, ``g_i = d out_i / d arg_(i)``: diagonal where
    ``arg`` has one value per entry ``(B, M)``, the column ``g`` where it has one ``(B,)``."""
    return g if arg.dim() == 1 else _diag(g)


def _neighbours(left: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
    """``(B, M, M + 1)``: ``left_i`` at ``(i, i)`` and ``right_i`` at ``(i, i + 1)`` (an
    edge value by the cells on either side of it)."""
    return pad(_diag(left), (0, 1)) + pad(_diag(right), (1, 0))


def _entries(value: torch.Tensor, n: int) -> torch.Tensor:
    """A per-point value ``(B,)`` or ``(B, M)`` as ``(B, M)``."""
    return value.unsqueeze(-1).expand(value.shape[0], n) if value.dim() == 1 else value


class _CellAxis(Model):
    """A model along one sub-batch axis (cells, edges or bins).

    ``variables``: ``(key, default name, role)``, role ``"in"`` or ``"out"``, a default
    of None making the key required. ``params_spec``: ``(key, default)``; a parameter in
    :data:`PROMOTABLE` given as a variable name becomes the input ``promoted[key]``, the
    others are parameters ``<block>.<key>``. :meth:`layout` gives the sub-batch shape of
    every key from those of the inputs (``subs``); a model that does not know them yet
    is built, and says what is missing when evaluated.
    """

    variables: ClassVar[tuple[tuple[str, str | None, str], ...]] = ()
    params_spec: ClassVar[tuple[tuple[str, float | None], ...]] = ()
    #: the parameters that must be one value (no sub-batch axis of their own)
    single: ClassVar[frozenset[str]] = frozenset()
    extra_options: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.options = frozenset(
            {k for k, _, _ in cls.variables} | {k for k, _ in cls.params_spec} | cls.extra_options
        )

    def __init__(
        self,
        name: str,
        names: Mapping[str, str],
        fixed: Mapping[str, torch.Tensor],
        promoted: Mapping[str, str],
        settings: Mapping[str, str],
        subs: Mapping[str, Shape] | None = None,
        providers: tuple[str, ...] = (),
    ) -> None:
        #: key -> variable name of the inputs and outputs
        self.names = dict(names)
        #: parameter key -> the variable that gives it
        self.promoted = dict(promoted)
        self.settings = dict(settings)
        self.providers = list(providers)
        #: input key (variables and promoted parameters) -> its sub-batch shape
        self.subs = {k: tuple(v) for k, v in (subs or {}).items()}
        self.fixed_keys = tuple(fixed)
        params = {f"{name}.{k}": v for k, v in fixed.items()}
        super().__init__(name, [], [], params)
        self._fixed = fixed
        self.missing: str | None = None
        self._shape()

    # --- shapes -----------------------------------------------------------------------

    def input_keys(self) -> list[str]:
        return [k for k, _, role in self.variables if role == "in"] + list(self.promoted)

    def output_keys(self) -> list[str]:
        return [k for k, _, role in self.variables if role == "out"]

    def var(self, key: str) -> str:
        return self.promoted.get(key) or self.names[key]

    def shape_of(self, key: str) -> Shape | None:
        """The sub-batch shape of an argument: an input's (None while unknown) or a
        fixed parameter's own shape."""
        if key in self.fixed_keys:
            return tuple(self._fixed[key].shape)
        return self.subs.get(key)

    def layout(self) -> dict[str, Shape]:
        """Every output key's sub-batch shape (subclasses); ValueError where the shapes
        disagree, :class:`_Missing` where an input's axis is not known yet."""
        raise NotImplementedError

    def _shape(self) -> None:
        try:
            outs = self.layout()
            self.missing = None
        except _Missing as gap:
            outs = {k: () for k in self.output_keys()}
            self.missing = str(gap)
        self.inputs = [
            Variable(self.var(k), self.subs.get(k, ()), self.subs.get(k, ()))
            for k in self.input_keys()
        ]
        self.outputs = [Variable(self.names[k], outs[k], outs[k]) for k in self.output_keys()]

    def with_sub_batch(self, subs: Mapping[str, Shape]) -> Model:
        given = {}
        for key in self.input_keys():
            shape = subs.get(self.var(key))
            if shape:
                if len(shape) != 1:
                    raise ValueError(
                        f"{self.type_name} '{self.name}': input '{self.var(key)}' has "
                        f"sub-batch axes {tuple(shape)}; a finite-volume model works along "
                        "one axis (one value per cell, edge or bin)"
                    )
                given[key] = tuple(shape)
        if not given:
            return self
        shaped = type(self)(
            self.name,
            self.names,
            self._fixed,
            self.promoted,
            self.settings,
            {**self.subs, **given},
            tuple(self.providers),
        )
        shaped.parameters = self.parameters  # one dict: a change through either is seen by both
        return shaped

    def to(self, device: torch.device | str) -> Model:
        super().to(device)
        self._fixed = {k: self.parameters[f"{self.name}.{k}"] for k in self.fixed_keys}
        return self

    def _cells(self, key: str, what: str) -> int | None:
        """The entries along the axis of argument ``key`` (None while unknown)."""
        shape = self.shape_of(key)
        if shape is None or shape == ():
            return None
        if len(shape) != 1:
            raise ValueError(
                f"{self.type_name} '{self.name}': '{key}' has shape {shape}; expected one "
                f"axis of {what}"
            )
        return shape[0]

    def _need(self, key: str, what: str, example: int) -> int:
        """The entries along the axis of input ``key``, which must have one."""
        count = self._cells(key, what)
        if count is None:
            name = self.var(key)
            raise _Missing(
                f"{self.type_name} '{self.name}': input '{name}' has no sub-batch axis "
                f"(one value per {what}); declare one in [Settings]/[example_batch_shape], "
                f"e.g. {name} = '(2; {example})', or compute it with a model that has one"
            )
        return count

    def _agree(self, key: str, count: int, what: str) -> None:
        """Argument ``key``, where it has an axis, has ``count`` entries of ``what``."""
        have = self._cells(key, what)
        if have is not None and have != count:
            which = key if key in self.fixed_keys else self.var(key)
            raise ValueError(
                f"{self.type_name} '{self.name}': '{which}' has {have} entries, expected "
                f"{count} ({what})"
            )

    # --- evaluation ---------------------------------------------------------------------

    def compute(self, a: Mapping[str, torch.Tensor], derivatives: bool) -> tuple[Tensors, Blocks]:
        """Outputs and their non-zero blocks ``[output key][argument key]``, each batched
        ``(B, *output, *argument)``, from every argument (inputs and parameters) by key,
        each batched (subclasses)."""
        raise NotImplementedError

    def evaluate(
        self,
        x: Mapping[str, torch.Tensor],
        p: Mapping[str, torch.Tensor],
        jacobian: bool = False,
        param_jacobian: bool = False,
    ) -> Evaluation:
        if self.missing is not None:
            raise Neml2Error(self.missing)
        like = next(iter(x.values())) if x else next(iter(p.values()))
        n = next(iter(x.values())).shape[0] if x else 1
        args = {k: x[self.var(k)] for k in self.input_keys()}
        for k in self.fixed_keys:
            value = p[f"{self.name}.{k}"]
            # materialised: Inductor (torch 2.13) cannot unsqueeze an expanded constant
            args[k] = value.expand((n, *value.shape)).contiguous()
        outs, d = self.compute(args, jacobian or param_jacobian)
        ev = Evaluation({self.names[k]: v for k, v in outs.items()})

        def block(o: str, k: str, shape: Shape) -> torch.Tensor:
            found = d.get(o, {}).get(k)
            if found is not None:
                return found
            return like.new_zeros((n, *outs[o].shape[1:], *shape))

        if jacobian:
            ev.jacobian = {
                self.names[o]: {
                    self.var(k): block(o, k, tuple(args[k].shape[1:])) for k in self.input_keys()
                }
                for o in self.output_keys()
            }
        if param_jacobian:
            ev.param_jacobian = {
                self.names[o]: {
                    f"{self.name}.{k}": block(o, k, tuple(args[k].shape[1:]))
                    for k in self.fixed_keys
                }
                for o in self.output_keys()
            }
        return ev

    # --- input file -------------------------------------------------------------------

    @classmethod
    def read_settings(cls, section: Section) -> dict[str, str]:
        """Options other than variables and parameters (subclasses)."""
        return {}

    @classmethod
    def default_names(cls, section: Section, settings: Mapping[str, str]) -> dict[str, str]:
        names = {}
        for key, default, _ in cls.variables:
            if default is None and key not in section.params:
                raise section.error(
                    None, f"[{section.full_name}]: missing required parameter '{key}'"
                )
            names[key] = variable_name(section, key, default or key)
        return names

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        settings = cls.read_settings(section)
        names = cls.default_names(section, settings)
        fixed: dict[str, torch.Tensor] = {}
        promoted: dict[str, str] = {}
        providers: list[str] = []
        subs: dict[str, Shape] = {}
        couplable = PROMOTABLE.get(cls.type_name, ())
        for key, default in cls.params_spec:
            words = section.strings(key) if key in section.params else []
            word = words[0] if len(words) == 1 else ""
            if (
                key in couplable
                and word
                and not _NUMBER.fullmatch(word)
                and not _is_tensor(section, word)
            ):
                variable, provider, shape = _resolve(section, key, word)
                promoted[key] = variable
                if provider is not None:
                    providers.append(provider)
                    if shape:
                        subs[key] = tuple(shape)
                continue
            value = tensor_option(section, key, "Scalar", default)
            if key in cls.single and value.dim() != 0:
                raise section.error(
                    key,
                    f"parameter '{key}': expected one Scalar, got a tensor of shape "
                    f"{tuple(value.shape)}",
                )
            if value.dim() > 1:
                raise section.error(
                    key,
                    f"parameter '{key}': expected one Scalar or one axis of them, got a "
                    f"tensor of shape {tuple(value.shape)}",
                )
            fixed[key] = value.clone()
        check_distinct(section, {**names, **promoted})
        cls.check_values(section, fixed)
        try:
            return cls(section.name, names, fixed, promoted, settings, subs, tuple(providers))
        except ValueError as err:
            raise section.error(None, f"[{section.full_name}]: {err}") from None

    @classmethod
    def check_values(cls, section: Section, fixed: Mapping[str, torch.Tensor]) -> None:
        """Refuse parameter values that make every result infinite (subclasses)."""


class _Missing(ValueError):
    """An input's sub-batch axis is not known yet (the model is not ready to evaluate)."""
