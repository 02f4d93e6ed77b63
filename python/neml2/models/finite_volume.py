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
"""

from __future__ import annotations

import math
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
from .coupling import COUPLABLE, _is_tensor, _resolve
from .kinematics import ScalarOptions
from .plasticity import SCALAR
from .registry import register

__all__ = [
    "PROMOTABLE",
    "DumpInSmallestBin",
    "FiniteVolumeAppendBoundaryCondition",
    "FiniteVolumeGradient",
    "FiniteVolumeUpwindedAdvectiveFlux",
    "LinearlyInterpolateToCellEdges",
    "SemiInfiniteCoordinateTransform",
    "SmearedDeltaSource",
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


@register
class FiniteVolumeGradient(_CellAxis):
    """``grad_u = -prefactor (u_(i+1) - u_i) / dx`` at the interior edges of the cells
    of ``u``; ``prefactor`` (default 1) one value or one per interior edge."""

    type_name = "FiniteVolumeGradient"
    variables = (("u", "u", "in"), ("grad_u", "grad_u", "out"))
    params_spec = (("prefactor", 1.0), ("dx", None))
    single = frozenset({"dx"})

    @classmethod
    def check_values(cls, section: Section, fixed: Mapping[str, torch.Tensor]) -> None:
        if float(fixed["dx"]) == 0.0:
            raise section.error("dx", "parameter 'dx': the cell spacing must not be 0")

    def layout(self) -> dict[str, Shape]:
        n = self._need("u", "cell", 10)
        if n < 2:
            raise ValueError(
                f"{self.type_name} '{self.name}': '{self.var('u')}' has {n} cell; a gradient "
                "needs at least 2"
            )
        self._agree("prefactor", n - 1, "one per interior edge")
        return {"grad_u": (n - 1,)}

    def compute(self, a: Mapping[str, torch.Tensor], derivatives: bool) -> tuple[Tensors, Blocks]:
        u, pf, dx = a["u"], a["prefactor"], a["dx"]
        m = u.shape[1] - 1
        du = u[:, 1:] - u[:, :-1]
        inv = 1.0 / dx.unsqueeze(-1)
        c = _entries(pf, m) * inv
        out = {"grad_u": -c * du}
        if not derivatives:
            return out, {}
        d = {
            "u": _neighbours(c, -c),
            "prefactor": _elementwise(-du * inv, pf),
            "dx": (c * du * inv),
        }
        return out, {"grad_u": d}


@register
class FiniteVolumeUpwindedAdvectiveFlux(_CellAxis):
    """``flux = v_edge (H u_i + (1 - H) u_(i+1))``, ``H = H(v_edge)`` (1/2 at 0): the
    value of the upwind cell carried by the velocity at each interior edge."""

    type_name = "FiniteVolumeUpwindedAdvectiveFlux"
    variables = (("u", "u", "in"), ("v_edge", "v_edge", "in"), ("flux", "flux", "out"))

    def layout(self) -> dict[str, Shape]:
        n = self._need("u", "cell", 10)
        if n < 2:
            raise ValueError(
                f"{self.type_name} '{self.name}': '{self.var('u')}' has {n} cell; a flux "
                "needs at least 2"
            )
        m = self._need("v_edge", "interior edge", n - 1)
        if m != n - 1:
            raise ValueError(
                f"{self.type_name} '{self.name}': '{self.var('v_edge')}' has {m} entries, "
                f"expected {n - 1} (one per interior edge of the {n} cells of "
                f"'{self.var('u')}')"
            )
        return {"flux": (m,)}

    def compute(self, a: Mapping[str, torch.Tensor], derivatives: bool) -> tuple[Tensors, Blocks]:
        u, v = a["u"], a["v_edge"]
        left, right = u[:, :-1], u[:, 1:]
        h = torch.heaviside(v, torch.full_like(v, 0.5))
        upwind = right + h * (left - right)
        out = {"flux": v * upwind}
        if not derivatives:
            return out, {}
        d = {"u": _neighbours(v * h, v * (1.0 - h)), "v_edge": _diag(upwind)}
        return out, {"flux": d}


@register
class FiniteVolumeAppendBoundaryCondition(_CellAxis):
    """``output = [bc_value, *input]`` (``side = left``, the default) or ``[*input,
    bc_value]`` (``right``): one entry more along the axis of ``input``."""

    type_name = "FiniteVolumeAppendBoundaryCondition"
    variables = (("input", "input", "in"), ("output", None, "out"))
    params_spec = (("bc_value", None),)
    single = frozenset({"bc_value"})
    extra_options = frozenset({"side"})

    @classmethod
    def read_settings(cls, section: Section) -> dict[str, str]:
        side = section.string("side", "left")
        if side not in ("left", "right"):
            raise section.error(
                "side", f"parameter 'side': expected 'left' or 'right', got '{side}'"
            )
        return {"side": side}

    @classmethod
    def default_names(cls, section: Section, settings: Mapping[str, str]) -> dict[str, str]:
        source = variable_name(section, "input", "input")
        target = variable_name(section, "output", f"{source}_with_bc_{settings['side']}")
        return {"input": source, "output": target}

    def layout(self) -> dict[str, Shape]:
        n = self._need("input", "cell", 10)
        return {"output": (n + 1,)}

    def compute(self, a: Mapping[str, torch.Tensor], derivatives: bool) -> tuple[Tensors, Blocks]:
        u, b = a["input"], a["bc_value"]
        n = u.shape[1]
        left = self.settings["side"] == "left"
        parts = [b.unsqueeze(-1), u] if left else [u, b.unsqueeze(-1)]
        out = {"output": torch.cat(parts, dim=1)}
        if not derivatives:
            return out, {}
        eye = torch.eye(n, dtype=u.dtype, device=u.device)
        shifted = pad(eye, (0, 0, 1, 0) if left else (0, 0, 0, 1))
        end = torch.zeros(n + 1, dtype=u.dtype, device=u.device)
        end[0 if left else n] = 1.0
        batch = u.shape[0]
        d = {
            "input": shifted.expand(batch, n + 1, n),
            "bc_value": end.expand(batch, n + 1),
        }
        return out, {"output": d}


@register
class LinearlyInterpolateToCellEdges(_CellAxis):
    """``edge_values`` at the interior edges by linear interpolation between the centers
    of the cells on either side: ``w_l q_i + w_r q_(i+1)``, ``w_r = (xe_(i+1) - x_i) /
    (x_(i+1) - x_i)``, ``w_l = 1 - w_r``."""

    type_name = "LinearlyInterpolateToCellEdges"
    variables = (("edge_values", "edge_values", "out"),)
    params_spec = (("cell_values", None), ("cell_centers", None), ("cell_edges", None))

    @classmethod
    def check_values(cls, section: Section, fixed: Mapping[str, torch.Tensor]) -> None:
        centers = fixed["cell_centers"]
        if centers.dim() != 1 or centers.shape[0] < 2:
            raise section.error(
                "cell_centers",
                "parameter 'cell_centers': expected a [Tensors] of at least 2 cell centers, "
                f"got shape {tuple(centers.shape)}",
            )
        if bool((centers[1:] == centers[:-1]).any()):
            raise section.error(
                "cell_centers", "parameter 'cell_centers': two neighbouring centers coincide"
            )
        n = centers.shape[0]
        if tuple(fixed["cell_edges"].shape) != (n + 1,):
            raise section.error(
                "cell_edges",
                f"parameter 'cell_edges': expected {n + 1} edges for {n} cell centers, got "
                f"shape {tuple(fixed['cell_edges'].shape)}",
            )
        values = fixed.get("cell_values")
        if values is not None and values.dim() == 1 and values.shape[0] != n:
            raise section.error(
                "cell_values",
                f"parameter 'cell_values': expected {n} values (one per cell center), got "
                f"{values.shape[0]}",
            )

    def layout(self) -> dict[str, Shape]:
        n = int(self._fixed["cell_centers"].shape[0])
        if "cell_values" in self.promoted:
            self.subs.setdefault("cell_values", (n,))
            self._agree("cell_values", n, "one per cell center")
        return {"edge_values": (n - 1,)}

    def compute(self, a: Mapping[str, torch.Tensor], derivatives: bool) -> tuple[Tensors, Blocks]:
        x, xe = a["cell_centers"], a["cell_edges"][:, 1:-1]
        m = x.shape[1] - 1
        q = a["cell_values"]
        qv = _entries(q, m + 1)
        left, right = qv[:, :-1], qv[:, 1:]
        xl, xr = x[:, :-1], x[:, 1:]
        inv = 1.0 / (xr - xl)
        wr = (xe - xl) * inv
        wl = (xr - xe) * inv
        du = right - left
        out = {"edge_values": wl * left + wr * right}
        if not derivatives:
            return out, {}
        inv2 = inv * inv
        dq = _neighbours(wl, wr) if q.dim() == 2 else wl + wr
        d = {
            "cell_values": dq,
            "cell_centers": _neighbours(-(xr - xe) * inv2 * du, -(xe - xl) * inv2 * du),
            "cell_edges": pad(_diag(inv * du), (1, 1)),
        }
        return out, {"edge_values": d}


class _Source(_CellAxis):
    """A source on the bins of ``cell_centers`` from the per-point ``magnitude``."""

    def layout(self) -> dict[str, Shape]:
        for key in ("magnitude", "location", "width"):
            if key in self.input_keys() and self.subs.get(key):
                raise ValueError(
                    f"{self.type_name} '{self.name}': input '{self.var(key)}' has sub-batch "
                    f"axes {self.subs[key]}; it is one value per point"
                )
        if "cell_centers" in self.promoted:
            n = self._need("cell_centers", "bin", 10)
        else:
            n = int(self._fixed["cell_centers"].shape[0])
        return {self.output_keys()[0]: (n,)}

    @classmethod
    def check_values(cls, section: Section, fixed: Mapping[str, torch.Tensor]) -> None:
        centers = fixed.get("cell_centers")
        if centers is not None and (centers.dim() != 1 or centers.shape[0] < 1):
            raise section.error(
                "cell_centers",
                "parameter 'cell_centers': expected a [Tensors] of cell centers (one axis), "
                f"got shape {tuple(centers.shape)}",
            )


@register
class SmearedDeltaSource(_Source):
    """``smeared_source = magnitude / (width sqrt(2 pi)) exp(-((x_k - location) /
    width)^2 / 2)`` at each cell center ``x_k``."""

    type_name = "SmearedDeltaSource"
    variables = (
        ("magnitude", "magnitude", "in"),
        ("location", "location", "in"),
        ("smeared_source", "state/smeared_source", "out"),
    )
    params_spec = (("width", None), ("cell_centers", None))
    single = frozenset({"width"})

    @classmethod
    def check_values(cls, section: Section, fixed: Mapping[str, torch.Tensor]) -> None:
        super().check_values(section, fixed)
        if "width" in fixed and float(fixed["width"]) == 0.0:
            raise section.error("width", "parameter 'width': the width must not be 0")

    def compute(self, a: Mapping[str, torch.Tensor], derivatives: bool) -> tuple[Tensors, Blocks]:
        mag, loc, w, x = a["magnitude"], a["location"], a["width"], a["cell_centers"]
        inv = (1.0 / w).unsqueeze(-1)
        arg = (x - loc.unsqueeze(-1)) * inv
        gauss = inv / math.sqrt(2.0 * math.pi) * torch.exp(-0.5 * arg * arg)
        src = mag.unsqueeze(-1) * gauss
        out = {"smeared_source": src}
        if not derivatives:
            return out, {}
        slope = src * arg * inv  # d src / d location
        d = {
            "magnitude": gauss,
            "location": slope,
            "width": src * (arg * arg - 1.0) * inv,
            "cell_centers": _diag(-slope),
        }
        return out, {"smeared_source": d}


@register
class DumpInSmallestBin(_Source):
    """``dumped_source = [magnitude, 0, ..., 0]``, one entry per cell center: the whole
    source in the first (smallest) bin."""

    type_name = "DumpInSmallestBin"
    variables = (("magnitude", "magnitude", "in"), ("dumped_source", "state/dumped_source", "out"))
    params_spec = (("cell_centers", None),)

    def compute(self, a: Mapping[str, torch.Tensor], derivatives: bool) -> tuple[Tensors, Blocks]:
        mag, x = a["magnitude"], a["cell_centers"]
        n = x.shape[1]
        first = torch.zeros(n, dtype=mag.dtype, device=mag.device)
        first[0] = 1.0
        out = {"dumped_source": mag.unsqueeze(-1) * first}
        if not derivatives:
            return out, {}
        return out, {"dumped_source": {"magnitude": first.expand(mag.shape[0], n)}}
