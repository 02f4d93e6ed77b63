"""Preparing a model for compiling: the request a command line makes, the model built
from its input file in the requested dtype (float32 refused where a Newton tolerance is
finer than float32 resolves), and what of it to compile."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from .. import artifact, hit, renames
from ..errors import Neml2Error
from ..hit import Section
from ..models import Model, model_section
from ..models.coupling import coupled_leaves
from ..models.points import with_per_point
from ..models.sub_batch import build_with_settings
from ..solvers import solver_table
from .export import graph_returns, per_point
from .selection import (
    Selection,
    select_graphs,
    select_into,
    select_pairs,
    select_params,
    select_per_point,
)

#: The smallest Newton ``rel_tol`` accepted with ``--dtype float32``: about 8 float32 ulps
#: (float32 resolves about 1.2e-7); a smaller tolerance is never met and every point of
#: every call would report non-convergence.
FLOAT32_MIN_REL_TOL = 1e-6


@dataclass(frozen=True)
class Request:
    """What the command line asks for: everything a worker process needs to rebuild the model."""

    file: str
    model: str
    pairs: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    dtype: str = "float64"
    verbose: bool = False
    graphs: tuple[str, ...] = ()
    into: tuple[str, ...] = ()
    #: --per-point names (each promoted with -p)
    per_point: tuple[str, ...] = ()
    #: --rename-input, --rename-output, --rename-parameter specs (OLD:NEW), by boundary
    rename_inputs: tuple[str, ...] = ()
    rename_outputs: tuple[str, ...] = ()
    rename_parameters: tuple[str, ...] = ()


@dataclass
class Prepared:
    """A model built from its input file, in the requested dtype, and what to compile of it."""

    section: Section
    model: Model
    sel: Selection
    dtype: torch.dtype
    #: the names the compiled boundary takes (model_meta.json); the graphs do not see them
    names: renames.Renames = field(default_factory=renames.Renames)


def prepare(req: Request) -> Prepared:
    """Parse the input file, build the model in ``req.dtype`` and resolve ``-d``/``-p``."""
    root = hit.load(req.file)
    section = model_section(root, req.model)
    if section.string("type", "") == artifact.STUB_TYPE:
        raise section.error(
            "type", f"[{section.full_name}]: already a compiled model; compile its source .i"
        )
    model = build_with_settings(root, req.model)
    for leaf in coupled_leaves(model):
        param, variable = next(iter(leaf.coupled.items()))
        raise Neml2Error(
            f"model '{leaf.name}': parameter '{param}' is given by the variable '{variable}'; "
            "such a model evaluates in Python (neml2.load_model, neml2-run) but cannot be "
            "compiled yet: give the parameter a value (promote it with -p to change it at "
            "run time)"
        )
    dtype = artifact.DTYPES[req.dtype]
    check_dtype(model, section, dtype)
    solver_table(model)  # one value per setting of each solver, or one line saying why not
    model.parameters = {k: v.to(dtype) for k, v in model.parameters.items()}
    pairs, params = select_pairs(model, req.pairs), select_params(model, req.params)
    sel = Selection(pairs, params, select_graphs(req.graphs, pairs, params))
    points = tuple(select_per_point(model, req.per_point, params))
    sel = Selection(pairs, params, sel.only, (), points)
    taking = model
    if points:
        try:
            taking = with_per_point(model, points)
        except Neml2Error as err:
            raise Neml2Error(f"--per-point {' '.join(req.per_point)}: {err}") from None
    # A graph whose returns are all batch-independent has nothing to store in place.
    asked = select_into(req.into, sel.graphs())
    into = tuple(
        g for g in asked if any(per_point(model, g, r) for r in graph_returns(model, g, sel))
    )
    point_into = tuple(
        g
        for g in asked
        if points
        and any(per_point(taking, g, r) for r in graph_returns(taking, g, sel, per_point=True))
    )
    sel = Selection(pairs, params, sel.only, into, points, point_into)
    return Prepared(section, model, sel, dtype, select_renames(model, req, params))


def select_renames(model: Model, req: Request, params: Sequence[str]) -> renames.Renames:
    """The --rename-* options, checked against the compiled boundary: the model's inputs and
    outputs, and the promoted parameters (given in full or by symbol, as with -p)."""

    def parameter(old: str) -> str | None:
        for name in (old, f"{model.name}.{old}"):
            if name in params:
                return name
        return None

    baked = [name for name in model.parameters if name not in params]
    hint = (
        f" (baked into the graphs: {', '.join(baked)}; promote one with -p to rename it)"
        if baked
        else ""
    )
    return renames.resolve(
        model.name,
        {
            "inputs": req.rename_inputs,
            "outputs": req.rename_outputs,
            "parameters": req.rename_parameters,
        },
        {
            "inputs": [v.name for v in model.inputs],
            "outputs": [v.name for v in model.outputs],
            "parameters": list(params),
        },
        resolve_old={"parameters": parameter},
        unknown_hint={"parameters": hint},
    )


def implicit_leaves(model: Model) -> list[Model]:
    """The implicit models inside ``model`` (itself, or the members of a composition)."""
    members = getattr(model, "models", None)
    if isinstance(members, list):
        return [leaf for member in members for leaf in implicit_leaves(member)]
    return [model] if model.implicit else []


def check_dtype(model: Model, section: Section, dtype: torch.dtype) -> None:
    """Refuse float32 for a Newton solve whose relative tolerance float32 cannot reach."""
    if dtype != torch.float32:
        return
    for leaf in implicit_leaves(model):
        rel_tol = getattr(getattr(leaf, "solver", None), "rel_tol", None)
        if rel_tol is None or rel_tol >= FLOAT32_MIN_REL_TOL:
            continue
        block = section.parent.child(leaf.name) if section.parent is not None else None
        named = block is not None and "solver" in block.params
        where = (
            f"[Solvers/{block.string('solver')}] sets rel_tol = {rel_tol:g}"
            if block is not None and named
            else f"model '{leaf.name}' uses the default Newton solver (rel_tol = {rel_tol:g})"
        )
        raise Neml2Error(
            f"--dtype float32: {where}, finer than float32 resolves (about 1.2e-07), so the "
            f"solve of model '{leaf.name}' would never converge; set rel_tol >= "
            f"{FLOAT32_MIN_REL_TOL:g} in a [Solvers] block or compile with --dtype float64"
        )
