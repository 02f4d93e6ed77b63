"""neml2-compile: export a model's graphs with torch.export and compile each with AOTInductor.

Writes ``<out>/<model>_aoti.i`` and ``<out>/<model>/<device>/`` (model_meta.json and one
``.pt2`` per graph) as doc/artifacts.md specifies, plus ``.neml2-fingerprint`` in each
device folder: what the folder was compiled from, so that an unchanged folder is skipped.
With ``-j N`` the graphs compile in N spawned processes, each rebuilding the model from
the input file.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import json
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
import uuid
import warnings
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from . import artifact, hit, renames, validate
from .cli import OneLineParser, check_writable_folder, only_model, parse_device, run_main
from .errors import InputError, Neml2Error
from .hit import Section
from .models import Model, model_section
from .models.base import Pair
from .models.coupling import coupled_leaves
from .models.sub_batch import build_with_settings
from .solvers import SETTINGS, Limits, given_settings, setting_names, solver_table

#: Batch size of the example inputs. Inductor takes it as the size hint of the dynamic
#: batch dimension, and with a small hint its CPU code generator judges the loops too
#: short to parallelize; a realistic hint keeps the OpenMP loop.
EXAMPLE_BATCH = 4096

#: Batched argument roles (dim 0 is the dynamic batch); every other role is unbatched.
#: ``result`` is a caller's buffer an in-place variant (--into) writes a per-point return into.
BATCHED_ROLES = frozenset({"input", "tangent", "cotangent", "result"})
#: The name and file suffix of a graph's in-place variant (``forward_into.pt2``).
INTO_SUFFIX = "_into"
#: The two returns every graph of an implicit model appends (doc/artifacts.md, ``status``).
STATUS_RETURNS: list[dict[str, str]] = [
    {"role": "converged", "name": "converged"},
    {"role": "residual", "name": "residual"},
]

Spec = dict[str, Any]


@dataclass(frozen=True)
class Selection:
    """What to compile: derivative pairs (-d), promoted parameters (-p), in model order,
    and the graphs --graphs keeps of those they allow (None: all of them)."""

    pairs: list[Pair]
    params: list[str]
    only: list[str] | None = None
    #: graphs that also get an in-place variant on the CPU (--into)
    into: tuple[str, ...] = ()

    def graphs(self) -> list[str]:
        allowed = allowed_graphs(bool(self.pairs), bool(self.params))
        return [g for g in allowed if self.only is None or g == "forward" or g in self.only]

    def into_graphs(self, device: torch.device) -> list[str]:
        """The graphs compiled with an in-place variant for ``device`` (CPU only)."""
        return [g for g in self.graphs() if g in self.into] if device.type == "cpu" else []

    def jobs(self, device: torch.device) -> list[str]:
        """What to compile for ``device``: each graph, and ``<graph>_into`` variants."""
        return self.graphs() + [g + INTO_SUFFIX for g in self.into_graphs(device)]


def allowed_graphs(pairs: bool, params: bool) -> list[str]:
    """The graphs -d (``pairs``) and -p (``params``) make, in the contract's order."""
    wanted = {
        "forward": True,
        "jvp": pairs,
        "jacobian": pairs,
        "param_jacobian": pairs and params,
        "param_vjp": params,
    }
    return [g for g in artifact.GRAPHS if wanted[g]]


#: The options a graph needs, for the message of a --graphs name they were not given for.
GRAPH_NEEDS = {"jvp": "-d", "jacobian": "-d", "param_jacobian": "-d and -p", "param_vjp": "-p"}


def select_graphs(specs: Sequence[str], pairs: list[Pair], params: list[str]) -> list[str] | None:
    """The --graphs names, each a graph that -d and -p make (forward is always compiled);
    None when --graphs was not given."""
    if not specs:
        return None
    allowed = allowed_graphs(bool(pairs), bool(params))
    for spec in specs:
        if spec not in artifact.GRAPHS:
            raise Neml2Error(
                f"--graphs {spec}: no such graph; graphs: {', '.join(artifact.GRAPHS)}"
            )
        if spec not in allowed:
            raise Neml2Error(
                f"--graphs {spec}: {spec} needs {GRAPH_NEEDS[spec]}; "
                f"with these options: {', '.join(allowed)}"
            )
    return [g for g in allowed if g in specs]


def select_into(specs: Sequence[str], graphs: Sequence[str]) -> tuple[str, ...]:
    """The --into names, each a graph that is compiled, in the contract's order."""
    for spec in specs:
        if spec not in artifact.GRAPHS:
            raise Neml2Error(f"--into {spec}: no such graph; graphs: {', '.join(artifact.GRAPHS)}")
        if spec not in graphs:
            raise Neml2Error(
                f"--into {spec}: {spec} is not compiled (compiled: {', '.join(graphs)})"
            )
    return tuple(g for g in graphs if g in specs)


def select_pairs(model: Model, specs: Sequence[str]) -> list[Pair]:
    """``of:wrt`` pairs; an empty side matches every name, so ``:`` selects all pairs."""
    available = [(o.name, i.name) for o in model.outputs for i in model.inputs]
    chosen: set[Pair] = set()
    for spec in specs:
        of, sep, wrt = spec.partition(":")
        matches = [(o, i) for o, i in available if sep and of in ("", o) and wrt in ("", i)]
        if not matches:
            listed = ", ".join(f"{o}:{i}" for o, i in available)
            raise Neml2Error(
                f"-d {spec}: model '{model.name}' has no derivative pair '{spec}'; "
                f"pairs (output:input): {listed}, or ':' for all"
            )
        chosen.update(matches)
    return [pair for pair in available if pair in chosen]


def select_params(model: Model, specs: Sequence[str]) -> list[str]:
    """Parameter names, given in full (``model.E``), by symbol (``E``) or ``:`` for all."""
    names = list(model.parameters)
    chosen: set[str] = set()
    for spec in specs:
        if spec == ":":
            chosen.update(names)
        elif spec in names:
            chosen.add(spec)
        elif f"{model.name}.{spec}" in names:
            chosen.add(f"{model.name}.{spec}")
        else:
            listed = ", ".join(names) or "none"
            raise Neml2Error(
                f"-p {spec}: model '{model.name}' has no parameter '{spec}'; "
                f"parameters: {listed}, or ':' for all"
            )
    return [name for name in names if name in chosen]


def parse_devices(specs: Sequence[str]) -> list[torch.device]:
    """One device per device type, each available here."""
    devices: list[torch.device] = []
    for spec in specs:
        device = parse_device(spec)
        if any(d.type == device.type for d in devices):
            raise Neml2Error(
                f"--device {spec}: device type '{device.type}' given twice; "
                "one artifact is built per device type"
            )
        devices.append(device)
    return devices


def graph_args(model: Model, graph: str, sel: Selection) -> list[Spec]:
    """The positional arguments of a graph, in the contract's order: inputs, promoted
    parameters, the solvers' run-time settings, then tangents or cotangents."""
    args: list[Spec] = [{"role": "input", "name": v.name} for v in model.inputs]
    args += [{"role": "parameter", "name": p} for p in sel.params]
    args += [{"role": "setting", "name": name} for name in setting_names(model)]
    if graph == "jvp":
        wrt = {i for _, i in sel.pairs}
        args += [{"role": "tangent", "name": v.name} for v in model.inputs if v.name in wrt]
    elif graph == "param_vjp":
        args += [{"role": "cotangent", "name": v.name} for v in model.outputs]
    return args


def graph_returns(model: Model, graph: str, sel: Selection) -> list[Spec]:
    """The outputs of a graph, in the contract's order; an implicit model's status last."""
    status = [dict(s) for s in STATUS_RETURNS] if model.implicit else []
    return regular_returns(model, graph, sel) + status


def settings_meta(model: Model, dtype: torch.dtype) -> list[Spec]:
    """The meta's ``settings``: per solver of ``model`` (in name order) its ``abs_tol``,
    ``rel_tol`` (in ``dtype``) and ``max_its`` (int64), each with its compiled value, the
    default of the graphs' ``setting`` arguments of that name."""
    specs: list[Spec] = []
    for name, solver in solver_table(model).items():
        for key in SETTINGS:
            value = getattr(solver, key)
            specs.append(
                {
                    "name": f"{name}.{key}",
                    "dtype": "int64" if key == "max_its" else dtype_text(dtype),
                    "value": int(value) if key == "max_its" else float(value),
                }
            )
    return specs


def per_point(model: Model, graph: str, ret: Spec) -> bool:
    """Whether return ``ret`` of ``graph`` has one value per point (the dispatcher writes it
    into its rows of the result), rather than one for the whole batch or a status."""
    if ret["role"] in ("output", "tangent"):
        return True
    if ret["role"] != "derivative":
        return False
    if graph == "param_jacobian":
        return bool(model.param_jacobian_batched(ret["of"], ret["wrt"]))
    return bool(model.jacobian_batched(ret["of"], ret["wrt"]))


def regular_returns(model: Model, graph: str, sel: Selection) -> list[Spec]:
    """The returns of a graph before any status returns."""
    if graph == "forward":
        return [{"role": "output", "name": v.name} for v in model.outputs]
    if graph == "jvp":
        of = {o for o, _ in sel.pairs}
        return [{"role": "tangent", "name": v.name} for v in model.outputs if v.name in of]
    if graph == "jacobian":
        return [{"role": "derivative", "of": o, "wrt": i} for o, i in sel.pairs]
    if graph == "param_jacobian":
        return [
            {"role": "derivative", "of": v.name, "wrt": p}
            for v in model.outputs
            for p in sel.params
        ]
    if graph == "param_vjp":
        return [{"role": "adjoint", "name": p} for p in sel.params]
    raise ValueError(graph)


class Graph(torch.nn.Module):
    """One graph of a model as a module with flat positional tensor arguments.

    Promoted parameters arrive as arguments; baked ones are buffers, which export
    turns into constants of the compiled package. ``<graph>_into`` is the in-place variant:
    after the graph's arguments it takes one buffer per per-point return, writes that
    return into it and returns the buffer, so the compiled code stores its results straight
    into memory the caller owns.
    """

    def __init__(
        self, model: Model, graph: str, sel: Selection, dtype: torch.dtype | None = None
    ) -> None:
        super().__init__()
        self.model = model
        #: The dtype of the example inputs (and so of the compiled graph's tensors).
        self.dtype = dtype or model.dtype
        self.into = graph.endswith(INTO_SUFFIX)
        self.graph = graph.removesuffix(INTO_SUFFIX)
        self.sel = sel
        self.args = graph_args(model, self.graph, sel)
        self.returns = graph_returns(model, self.graph, sel)
        #: positions of the returns an in-place variant writes into a buffer argument
        self.written = [i for i, r in enumerate(self.returns) if per_point(model, self.graph, r)]
        if self.into:
            self.args += [{"role": "result", "index": i} for i in self.written]
        self.baked = [name for name in model.parameters if name not in sel.params]
        for index, name in enumerate(self.baked):
            self.register_buffer(f"baked_{index}", model.parameters[name].detach().clone())
        #: the meta's ``settings``: the compiled values of the ``setting`` arguments
        self.settings = {s["name"]: s for s in settings_meta(model, self.dtype)}
        self.solvers = list(solver_table(model))

    def forward(self, *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
        out = list(self.values(tensors[: len(tensors) - self.into * len(self.written)]))
        if self.into:
            buffers = tensors[len(tensors) - len(self.written) :]
            for i, buffer in zip(self.written, buffers, strict=True):
                out[i] = buffer.copy_(out[i])
        return tuple(out)

    def values(self, tensors: Sequence[torch.Tensor]) -> tuple[torch.Tensor, ...]:
        """The graph's returns from its arguments (without any result buffers)."""
        by_role: dict[str, dict[str, torch.Tensor]] = {}
        for spec, tensor in zip(self.args, tensors, strict=False):
            by_role.setdefault(spec["role"], {})[spec["name"]] = tensor
        x = by_role.get("input", {})
        p = {name: getattr(self, f"baked_{i}") for i, name in enumerate(self.baked)}
        p.update(by_role.get("parameter", {}))
        model, sel = self.model, self.sel
        given = by_role.get("setting", {})
        solvers = {
            name: Limits(*(given[f"{name}.{key}"] for key in SETTINGS)) for name in self.solvers
        }
        with given_settings(solvers):  # the solves read the setting arguments
            ev = model.evaluate(
                x,
                p,
                jacobian=self.graph in ("jvp", "jacobian"),
                param_jacobian=self.graph in ("param_jacobian", "param_vjp"),
            )
        if self.graph == "forward":
            values: dict[str, Any] = ev.outputs
        elif self.graph == "jvp":
            values = model.jvp_of(ev.jacobian, by_role["tangent"], sel.pairs)
        elif self.graph == "jacobian":
            values = ev.jacobian
        elif self.graph == "param_jacobian":
            values = ev.param_jacobian
        else:
            values = model.param_vjp_of(ev.param_jacobian, p, by_role["cotangent"], sel.params)
        regular = tuple(
            values[r["of"]][r["wrt"]] if r["role"] == "derivative" else values[r["name"]]
            for r in self.returns
            if r["role"] not in ("converged", "residual")
        )
        if ev.status is None:
            return regular
        return (*regular, ev.status.converged, ev.status.residual)

    def example_args(self, device: torch.device) -> tuple[torch.Tensor, ...]:
        examples: list[torch.Tensor] = []
        for spec in self.args:
            if spec["role"] == "result":
                continue
            if spec["role"] == "parameter":
                examples.append(self.model.parameters[spec["name"]].to(device, self.dtype))
            elif spec["role"] == "setting":
                examples.append(self.setting(spec["name"], device))
            else:
                shape = self.model.variable(spec["name"]).shape
                examples.append(
                    torch.rand((EXAMPLE_BATCH, *shape), dtype=self.dtype, device=device)
                )
        if self.into:
            with torch.no_grad():
                values = self.values(examples)
            examples += [
                torch.empty(values[i].shape, dtype=self.dtype, device=device) for i in self.written
            ]
        return tuple(examples)

    def setting(self, name: str, device: torch.device | str = "cpu") -> torch.Tensor:
        """The compiled value of the ``setting`` argument ``name``, as the graph takes it."""
        return validate.setting_tensor(self.settings[name], torch.device(device))


def inductor_configs(device: torch.device) -> dict[str, Any]:
    """AOTInductor settings per device type.

    CPU: ``cpp.dynamic_threads`` keeps every generated loop nest an OpenMP region sized
    by the runtime's thread count (the caller's ``set_num_threads``), instead of a
    count fixed at compile time or no parallel region at all.
    """
    configs: dict[str, Any] = {}
    if device.type == "cpu" and hasattr(torch._inductor.config.cpp, "dynamic_threads"):
        configs["cpp.dynamic_threads"] = True
    return configs


def compile_graph(module: Graph, device: torch.device, path: Path) -> None:
    batch = torch.export.Dim("batch", min=0)
    shapes = tuple({0: batch} if s["role"] in BATCHED_ROLES else None for s in module.args)
    program = torch.export.export(
        module, module.example_args(device), dynamic_shapes=(shapes,), strict=False
    )
    configs = inductor_configs(device)
    try:
        torch._inductor.aoti_compile_and_package(
            program, package_path=str(path), inductor_configs=configs
        )
    except Exception as err:
        if not buffer_reuse_fault(err):
            raise
        # Inductor's buffer-reuse planner fails on some large graphs (torch 2.11: "End
        # index N out of bounds [0, N - 1]" from its peak-memory estimate); without buffer
        # reuse the same graph compiles, at the cost of more temporary memory
        torch._inductor.aoti_compile_and_package(
            program,
            package_path=str(path),
            inductor_configs={**configs, "allow_buffer_reuse": False},
        )


def buffer_reuse_fault(err: BaseException) -> bool:
    """Whether ``err`` is Inductor's buffer-reuse planner failing on its own estimate."""
    text = f"{err} {err.__cause__ or ''}"
    return "out of bounds" in text and "End index" in text


def variables_meta(variables: Sequence[Any]) -> list[Spec]:
    """Each variable's per-point shape, and its leading sub-batch axes where it has any."""
    specs: list[Spec] = []
    for v in variables:
        spec: Spec = {"name": v.name, "shape": list(v.shape)}
        if v.sub_batch:
            spec["sub_batch"] = list(v.sub_batch)
        specs.append(spec)
    return specs


def build_meta(
    model: Model, device: torch.device, sel: Selection, dtype: torch.dtype | None = None
) -> artifact.Meta:
    graphs = sel.graphs()
    param_blocks = "param_jacobian" in graphs
    dtype_name = dtype_text(dtype or model.dtype)
    return {
        "schema": artifact.SCHEMA,
        "model": model.name,
        "type": model.type_name,
        "device": device.type,
        "dtype": dtype_name,
        "torch_version": torch.__version__,
        "inputs": variables_meta(model.inputs),
        "outputs": variables_meta(model.outputs),
        "parameters": [
            {
                "name": name,
                "shape": list(model.parameters[name].shape),
                "value": model.parameters[name].detach().cpu().reshape(-1).tolist(),
            }
            for name in sel.params
        ],
        "derivatives": [
            {"of": o, "wrt": i, "batched": model.jacobian_batched(o, i)} for o, i in sel.pairs
        ],
        "param_derivatives": [
            {"of": v.name, "wrt": p, "batched": model.param_jacobian_batched(v.name, p)}
            for v in model.outputs
            for p in sel.params
        ]
        if param_blocks
        else [],
        "status": {"converged": "converged", "residual": "residual"} if model.implicit else None,
        "settings": settings_meta(model, dtype or model.dtype),
        "graphs": {g: graph_meta(model, g, sel, g in sel.into_graphs(device)) for g in graphs},
    }


def graph_meta(model: Model, graph: str, sel: Selection, into: bool) -> Spec:
    """A graph's entry of model_meta.json: its file, signature and in-place variant."""
    spec: Spec = {
        "file": f"{graph}.pt2",
        "args": graph_args(model, graph, sel),
        "returns": graph_returns(model, graph, sel),
    }
    if into:
        spec["into"] = f"{graph}{INTO_SUFFIX}.pt2"
    return spec


def dtype_text(dtype: torch.dtype) -> str:
    """``float64`` for ``torch.float64``: the spelling of ``--dtype`` and of model_meta.json."""
    return str(dtype).removeprefix("torch.")


# --- preparing a model ---------------------------------------------------------------

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
    # A graph whose returns are all batch-independent has nothing to store in place.
    into = tuple(
        g
        for g in select_into(req.into, sel.graphs())
        if any(per_point(model, g, r) for r in graph_returns(model, g, sel))
    )
    sel = Selection(pairs, params, sel.only, into)
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


# --- fingerprints: an unchanged artifact is not recompiled --------------------------

#: Written last into each device folder: what the artifact was compiled from (JSON).
FINGERPRINT_FILE = ".neml2-fingerprint"
#: Bump when the fingerprint's contents change meaning.
FINGERPRINT_FORMAT = 2
#: How a changed fingerprint entry is named in the "recompiling" line.
FINGERPRINT_LABELS = {
    "format": "fingerprint format",
    "blocks": "input blocks",
    "parameter_values": "parameter values",
    "meta": "flags, dtype or variables",
    "renames": "names (--rename-*)",
    "inductor_configs": "inductor settings",
    "example_batch": "example batch",
    "neml2_version": "neml2 version",
    "neml2_source": "neml2 sources",
    "torch_version": "torch version",
}


def dependency_sections(section: Section) -> list[Section]:
    """The model's block, the blocks it composes (``models``) and the solvers it names."""
    root = section
    while root.parent is not None:
        root = root.parent
    solvers = root.child("Solvers")
    seen: dict[str, Section] = {}
    todo = [section]
    while todo:
        block = todo.pop()
        if block.full_name in seen:
            continue
        seen[block.full_name] = block
        todo += block.children.values()
        if "models" in block.params and block.parent is not None:
            names = block.params["models"].text.split()
            todo += [sub for name in names if (sub := block.parent.child(name)) is not None]
        if "solver" in block.params and solvers is not None:
            solver = solvers.child(block.params["solver"].text.strip())
            if solver is not None:
                todo.append(solver)
    return [seen[name] for name in sorted(seen)]


def canonical_blocks(section: Section) -> dict[str, dict[str, str]]:
    """The dependency blocks' parameters, substituted and with whitespace normalized."""
    return {
        block.full_name: {key: " ".join(value.text.split()) for key, value in block.params.items()}
        for block in dependency_sections(section)
    }


@functools.cache
def package_digest() -> str:
    """SHA-256 of this package's Python sources: a changed model kernel changes the graphs."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def fingerprint_inputs(prep: Prepared, device: torch.device) -> dict[str, Any]:
    """Everything that determines one device folder's contents."""
    from . import __version__

    return {
        "format": FINGERPRINT_FORMAT,
        "blocks": canonical_blocks(prep.section),
        "parameter_values": {
            name: value.detach().cpu().reshape(-1).tolist()
            for name, value in prep.model.parameters.items()
        },
        "meta": build_meta(prep.model, device, prep.sel, prep.dtype),
        "renames": prep.names.as_dict(),
        "inductor_configs": inductor_configs(device),
        "example_batch": EXAMPLE_BATCH,
        "neml2_version": __version__,
        "neml2_source": package_digest(),
        "torch_version": torch.__version__,
    }


def written_meta(inputs: dict[str, Any]) -> artifact.Meta:
    """The model_meta.json of a device folder: the fingerprint's meta (the graphs' own
    names) with the --rename-* names."""
    return renames.apply(inputs["meta"], inputs.get("renames", {}))


def fingerprint(inputs: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def stale_reason(folder: Path, inputs: dict[str, Any]) -> str | None:
    """Why ``folder`` must be compiled again, or None when it is up to date.

    Up to date: the fingerprint file matches ``inputs``, model_meta.json holds exactly
    the meta that would be written, and every graph file has the size and the SHA-256
    recorded when it was compiled (a file with flipped bytes is not up to date).
    """
    path = folder / FINGERPRINT_FILE
    if not path.is_file():
        return "not compiled before" if not folder.is_dir() else f"no {FINGERPRINT_FILE}"
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return f"{FINGERPRINT_FILE} is unreadable"
    if not isinstance(record, dict):
        return f"{FINGERPRINT_FILE} is unreadable"
    if record.get("fingerprint") != fingerprint(inputs):
        old = record.get("inputs")
        changed = [
            FINGERPRINT_LABELS.get(key, key)
            for key in inputs
            if not isinstance(old, dict) or old.get(key) != inputs[key]
        ]
        return "changed: " + (", ".join(changed) or "fingerprint")
    try:
        meta = json.loads((folder / artifact.META_FILE).read_text())
    except (OSError, ValueError):
        return f"{artifact.META_FILE} is missing or unreadable"
    if meta != written_meta(inputs):
        return f"{artifact.META_FILE} was edited"
    sizes, hashes = record.get("sizes"), record.get("sha256")
    for name in graph_files(inputs["meta"]):
        file = folder / name
        if not file.is_file():
            return f"{name} is missing"
        if not isinstance(sizes, dict) or file.stat().st_size != sizes.get(name):
            return f"{name} changed size"
        if not isinstance(hashes, dict) or file_digest(file) != hashes.get(name):
            return f"{name} changed since it was compiled (SHA-256 differs)"
    return None


def only_names_changed(folder: Path, inputs: dict[str, Any]) -> bool:
    """Whether ``folder``'s graphs are what ``inputs`` would compile and only the --rename-*
    names differ: every fingerprint input but ``renames`` is the same and every graph file
    has its recorded size and SHA-256. The graphs are positional, so a rename needs only a
    new model_meta.json."""
    try:
        record = json.loads((folder / FINGERPRINT_FILE).read_text())
    except (OSError, ValueError):
        return False
    old = record.get("inputs") if isinstance(record, dict) else None
    if not isinstance(old, dict) or old.get("renames", {}) == inputs["renames"]:
        return False
    if {k: v for k, v in old.items() if k != "renames"} != {
        k: v for k, v in inputs.items() if k != "renames"
    }:
        return False
    sizes, hashes = record.get("sizes"), record.get("sha256")
    for name in graph_files(inputs["meta"]):
        file = folder / name
        if not file.is_file() or not isinstance(sizes, dict) or not isinstance(hashes, dict):
            return False
        if file.stat().st_size != sizes.get(name) or file_digest(file) != hashes.get(name):
            return False
    return True


def rewrite_names(folder: Path, inputs: dict[str, Any]) -> None:
    """Give ``folder`` the model_meta.json and fingerprint of ``inputs`` without compiling:
    the graph files are linked (or copied) into a fresh build folder beside it, which then
    takes the folder's place as a compiled one does (:func:`install_folder`)."""
    build = build_folder(folder)
    try:
        for name in graph_files(inputs["meta"]):
            try:
                os.link(folder / name, build / name)
            except OSError:
                shutil.copy2(folder / name, build / name)
        artifact.write_meta(build, written_meta(inputs))
        write_fingerprint(build, inputs)
        install_folder(build, folder)
    finally:
        shutil.rmtree(build, ignore_errors=True)


def file_digest(path: Path) -> str:
    """SHA-256 of a file's contents."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def graph_files(meta: artifact.Meta) -> list[str]:
    """The .pt2 files a device folder's meta names: each graph's and its in-place variant's."""
    graphs = meta["graphs"].values()
    return [g["file"] for g in graphs] + [g["into"] for g in graphs if "into" in g]


def write_fingerprint(folder: Path, inputs: dict[str, Any]) -> None:
    """Record what ``folder`` was compiled from, and each graph file's size and SHA-256."""
    names = graph_files(inputs["meta"])
    record = {
        "fingerprint": fingerprint(inputs),
        "sizes": {name: (folder / name).stat().st_size for name in names},
        "sha256": {name: file_digest(folder / name) for name in names},
        "inputs": inputs,
    }
    (folder / FINGERPRINT_FILE).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")


# --- output paths: checked before any work, written atomically -----------------------


def check_model_name(section: Section) -> None:
    """Refuse a model name that is not one plain path component: the artifact folder
    ``OUT/<model>/`` must lie inside OUT."""
    name = section.name
    if name in ("", ".", "..") or any(c in name for c in "/\\\0"):
        raise InputError(
            section.path,
            section.line,
            f"[Models/{name}]: the model name '{name}' cannot name the artifact folder "
            "OUT/<model>/; rename the block to a plain name (not '.' or '..', no '/' or '\\')",
        )


def check_targets(out: Path, model: str, source: Path, devices: Sequence[torch.device]) -> None:
    """Refuse, before any work, output paths that cannot be written: OUT (a file, or not
    writable), a file where a folder goes, and a stub that would overwrite ``source``."""
    check_writable_folder(out, "-o")
    for folder in (out / model, *(out / model / d.type for d in devices)):
        if folder.exists() and not folder.is_dir():
            raise Neml2Error(f"-o {out}: '{folder}' is a file, where the artifact needs a folder")
    stub = artifact.stub_path(out, model)
    if stub.is_dir():
        raise Neml2Error(f"-o {out}: the stub '{stub}' is a folder")
    if stub.exists() and source.exists() and os.path.samefile(stub, source):
        raise Neml2Error(
            f"-o {out}: the stub '{stub}' would overwrite the input file '{source}'; "
            "give another -o or rename the input file"
        )


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold a Ctrl-C (SIGINT) until the block is done, then raise KeyboardInterrupt."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise KeyboardInterrupt


@contextlib.contextmanager
def interrupts_blocked() -> Iterator[None]:
    """Block SIGINT in this thread, so that the worker processes started inside the block
    inherit the blocked signal: a Ctrl-C reaches only the parent, which ends them."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def build_folder(folder: Path) -> Path:
    """A fresh hidden folder beside ``folder`` to compile into (``.<device>.partial-*``)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{folder.name}.partial-", dir=folder.parent))


def install_folder(build: Path, folder: Path) -> None:
    """Put the complete ``build`` folder in the place of ``folder``; only now is the old
    folder (if any) moved aside, and then removed."""
    old = None
    with interrupts_deferred():
        if folder.exists() or folder.is_symlink():
            old = folder.with_name(f".{folder.name}.old-{uuid.uuid4().hex[:8]}")
            os.replace(folder, old)
        os.replace(build, folder)
    if old is not None:
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink(missing_ok=True)


def write_stub(stub: Path, text: str) -> None:
    """Write the stub through a temporary file and a rename: never half written."""
    stub.parent.mkdir(parents=True, exist_ok=True)
    temporary = stub.with_name(f".{stub.name}.partial-{uuid.uuid4().hex[:8]}")
    try:
        temporary.write_text(text)
        os.replace(temporary, stub)
    finally:
        temporary.unlink(missing_ok=True)


def missing_folders(folder: Path) -> list[Path]:
    """``folder`` and its ancestors that do not exist yet, deepest first."""
    missing: list[Path] = []
    while not folder.exists() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    return missing


# --- compiling -----------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """One graph for one device, written to ``path`` in the device's build folder."""

    device: torch.device
    graph: str
    path: Path


@dataclass
class DeviceWork:
    """A device folder being compiled: its fingerprint inputs, the graphs still running and
    the hidden build folder beside it that they are written into (see :func:`build_folder`)."""

    folder: Path
    inputs: dict[str, Any]
    remaining: set[str]
    build: Path
    start: float = 0.0


def compile_one(prep: Prepared, job: Job, verbose: bool) -> float:
    """Compile one graph (the model already on ``job.device``); the seconds it took."""
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            if not verbose:
                warnings.simplefilter("ignore")
            module = Graph(prep.model, job.graph, prep.sel, prep.dtype).to(job.device)
            compile_graph(module, job.device, job.path)
    except Exception as err:
        if verbose:
            raise
        raise Neml2Error(failure_message(job, err)) from None
    return time.perf_counter() - start


def failure_message(job: Job, err: BaseException) -> str:
    first = (str(err).strip().splitlines() or [""])[0]
    return (
        f"compiling {job.graph} for {job.device.type} failed: {type(err).__name__}: {first} "
        "(rerun with --verbose for the full traceback)"
    )


def init_worker() -> None:
    """A worker compiles one graph at a time; the -j processes are the parallelism.

    A worker ignores Ctrl-C (it starts with SIGINT blocked, see :func:`interrupts_blocked`):
    the parent, interrupted, ends the workers and removes the build folders.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    config = torch._inductor.config
    if hasattr(config, "compile_threads"):
        config.compile_threads = 1


def compile_in_worker(
    req: Request, device: str, graph: str, path: str, expected: str
) -> tuple[float, str | None, str | None]:
    """Worker-process entry: (seconds, one-line error or None, traceback text or None).

    Errors come back as text rather than as exceptions, so that each one reaches the
    parent whole (an exception that cannot be pickled would not) and prints as in
    serial mode.
    """
    job = Job(torch.device(device), graph, Path(path))
    try:
        prep = prepare(req)
        if fingerprint(fingerprint_inputs(prep, job.device)) != expected:
            return 0.0, f"{req.file} changed while it was being compiled; run again", None
        prep.model.to(job.device)
        return compile_one(prep, job, req.verbose), None, None
    except Neml2Error as err:
        return 0.0, str(err), None
    except Exception as err:
        return 0.0, failure_message(job, err), traceback.format_exc()


def stop_workers(pool: ProcessPoolExecutor) -> None:
    """Drop the queued jobs and end the running ones now rather than after their compile."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=10)


class Compiler:
    """Runs the jobs of every stale device folder, serially or in ``jobs`` processes."""

    def __init__(self, req: Request, prep: Prepared, work: dict[str, DeviceWork]) -> None:
        self.req = req
        self.prep = prep
        self.work = work
        self.total = sum(len(w.remaining) for w in work.values())
        self.started = 0
        self.compiled = 0

    def announce(self, job: Job) -> None:
        self.started += 1
        work = self.work[job.device.type]
        if not work.start:
            work.start = time.perf_counter()
        print(
            f"[{self.started}/{self.total}] compiling {job.graph} for {job.device.type} ...",
            flush=True,
        )

    def finished(self, job: Job, seconds: float) -> None:
        self.compiled += 1
        work = self.work[job.device.type]
        print(f"{work.folder / job.path.name}: compiled in {seconds:.1f} s", flush=True)
        work.remaining.discard(job.graph)
        if not work.remaining:
            artifact.write_meta(work.build, written_meta(work.inputs))
            write_fingerprint(work.build, work.inputs)
            install_folder(work.build, work.folder)
            elapsed = time.perf_counter() - work.start
            print(f"{work.folder}: done in {elapsed:.1f} s", flush=True)

    def run(self, jobs: Sequence[Job], processes: int) -> None:
        if processes <= 1 or len(jobs) <= 1:
            self.run_serial(jobs)
        else:
            self.run_parallel(jobs, min(processes, len(jobs)))

    def run_serial(self, jobs: Sequence[Job]) -> None:
        for job in jobs:
            self.announce(job)
            self.prep.model.to(job.device)
            self.finished(job, compile_one(self.prep, job, self.req.verbose))

    def run_parallel(self, jobs: Sequence[Job], processes: int) -> None:
        queue = iter(jobs)
        running: dict[Future[tuple[float, str | None, str | None]], Job] = {}
        pool = ProcessPoolExecutor(
            max_workers=processes,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=init_worker,
        )

        def submit_next() -> None:
            job = next(queue, None)
            if job is None:
                return
            self.announce(job)
            expected = fingerprint(self.work[job.device.type].inputs)
            with interrupts_blocked():
                future = pool.submit(
                    compile_in_worker, self.req, str(job.device), job.graph, str(job.path), expected
                )
            running[future] = job

        clean = False
        try:
            for _ in range(processes):
                submit_next()
            while running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    job = running.pop(future)
                    try:
                        seconds, error, trace = future.result()
                    except BrokenProcessPool:
                        raise Neml2Error(
                            f"compiling {job.graph} for {job.device.type} failed: its worker "
                            "process died (out of memory?); rerun with fewer jobs (-j)"
                        ) from None
                    if error is not None:
                        if trace and self.req.verbose:
                            print(trace, file=sys.stderr, end="", flush=True)
                        raise Neml2Error(error)
                    self.finished(job, seconds)
                    submit_next()
            clean = True
        finally:
            if clean:
                pool.shutdown(wait=True)
            else:
                stop_workers(pool)


def compile_model(
    req: Request,
    prep: Prepared,
    devices: Sequence[torch.device],
    out: Path,
    processes: int = 1,
    force: bool = False,
) -> None:
    """Compile each stale device folder of ``prep``'s model under ``out``, then the stub.

    Each folder is compiled into a hidden build folder beside it and renamed into place
    when complete, so that a failure or Ctrl-C leaves the previous folder as it was; the
    stub is written (atomically) only once every folder it points to is in place.
    """
    start = time.perf_counter()
    work: dict[str, DeviceWork] = {}
    jobs: list[Job] = []
    up_to_date = renamed = 0
    model_folder = out / prep.model.name
    created = missing_folders(model_folder)
    done = False
    try:
        for device in devices:
            folder = model_folder / device.type
            inputs = fingerprint_inputs(prep, device)
            reason = "--force" if force else stale_reason(folder, inputs)
            if reason is None:
                print(f"{folder}: up to date, skipped", flush=True)
                up_to_date += 1
                continue
            if not force and only_names_changed(folder, inputs):
                rewrite_names(folder, inputs)
                print(
                    f"{folder}: only the names changed (--rename-*): {artifact.META_FILE} "
                    "rewritten, no graph compiled",
                    flush=True,
                )
                renamed += 1
                continue
            graphs = prep.sel.jobs(device)
            count = f"{len(graphs)} graph{'s' if len(graphs) != 1 else ''}"
            print(f"{folder}: {count} to compile ({', '.join(graphs)}); {reason}", flush=True)
            build = build_folder(folder)
            work[device.type] = DeviceWork(folder, inputs, set(graphs), build)
            jobs += [Job(device, graph, build / f"{graph}.pt2") for graph in graphs]
        compiler = Compiler(req, prep, work)
        compiler.run(jobs, processes)
        stub = artifact.stub_path(out, prep.model.name)
        text = artifact.stub_text(prep.model.name)
        if not stub.is_file() or stub.read_text() != text:
            write_stub(stub, text)
            print(f"{stub}: written")
        done = True
    finally:
        for device_work in work.values():
            shutil.rmtree(device_work.build, ignore_errors=True)
        if not done:
            for folder in created:  # deepest first; only those still empty
                with contextlib.suppress(OSError):
                    folder.rmdir()
    total = f"done in {time.perf_counter() - start:.1f} s: {compiler.compiled} graph"
    total += "s" if compiler.compiled != 1 else ""
    total += " compiled"
    if up_to_date:
        total += f", {up_to_date} device folder{'s' if up_to_date != 1 else ''} up to date"
    if renamed:
        total += f", {renamed} device folder{'s' if renamed != 1 else ''} renamed"
    print(total, flush=True)


# --- command line ------------------------------------------------------------------

DESCRIPTION = """\
Compile one model of an input file into AOTInductor packages that the neml2 C++
runtime (and neml2.load_model) loads: OUT/<model>_aoti.i, a stub to load, and
OUT/<model>/<device>/ with model_meta.json and one .pt2 per graph (forward always;
jvp and jacobian with -d; param_jacobian and param_vjp with -p; --graphs keeps some).

example:
  neml2-compile tests/aoti/forward_single/model.i --model model -d : -j 2 -o aoti

Each graph takes tens of seconds to minutes to compile. A device folder whose
input blocks, flags, dtype, torch and neml2 are unchanged since it was compiled
is skipped ("up to date, skipped"); --force compiles it anyway.
"""

EPILOG = """\
The artifact layout and model_meta.json are specified in doc/artifacts.md; the
input file syntax and the model types in doc/authoring.md and doc/models.md.
A mistake in the input or the options prints one line and exits with status 2.
"""


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{text}'")
    return value


#: Namespace attribute where :class:`Values` records each run of values, in order.
RUNS = "_value_runs"


class Values(argparse.Action):
    """``nargs='+'``, storing the run of values (or, with ``extend``, appending it), and
    recording each run so that :func:`parse_args` can take FILE back from the end of one."""

    def __init__(
        self, option_strings: Sequence[str], dest: str, extend: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(option_strings, dest, nargs="+", **kwargs)
        self.extend = extend

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        run = [str(v) for v in (values or [])]
        if getattr(namespace, RUNS, None) is None:
            setattr(namespace, RUNS, [])
        getattr(namespace, RUNS).append((self.dest, self.extend, run))
        before = list(getattr(namespace, self.dest) or []) if self.extend else []
        setattr(namespace, self.dest, before + run)


def looks_like_file(value: str) -> bool:
    return value.endswith(".i") or Path(value).is_file()


def make_parser() -> argparse.ArgumentParser:
    """The parser of :func:`parse_args`, which takes FILE back from an option of several values
    (--device, -d, -p, --graphs, --into, --rename-*)."""
    parser = OneLineParser(
        prog="neml2-compile",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    file = parser.add_argument(
        "file",
        metavar="FILE",
        help="the model input file (.i); options may come before or after it",
    )
    parser.add_argument(
        "--model",
        metavar="NAME",
        help="the block of [Models] to compile (default: the file's only model; required "
        "when [Models] holds several)",
    )
    parser.add_argument(
        "--device",
        action=Values,
        default=["cpu"],
        metavar="DEVICE",
        help="device type(s) to compile for, one folder each: cpu, cuda (default: cpu)",
    )
    parser.add_argument(
        "-d",
        dest="pairs",
        action=Values,
        extend=True,
        default=[],
        metavar="PAIR",
        help="derivative pairs OUTPUT:INPUT to compile jvp and jacobian for; ':' for all, "
        "'stress:' for every input of stress (default: none, forward only)",
    )
    parser.add_argument(
        "-p",
        dest="params",
        action=Values,
        extend=True,
        default=[],
        metavar="NAME",
        help="parameters to promote to run-time inputs (E or model.E), which adds "
        "param_vjp (and param_jacobian with -d); ':' for all (default: none, every "
        "parameter baked into the graphs)",
    )
    parser.add_argument(
        "--graphs",
        action=Values,
        extend=True,
        default=[],
        metavar="GRAPH",
        help="compile only these of the graphs -d and -p make, forward always (e.g. "
        "'--graphs jacobian' for a Newton solve that needs no jvp; default: all of them)",
    )
    parser.add_argument(
        "--into",
        action=Values,
        extend=True,
        default=[],
        metavar="GRAPH",
        help="also compile, for the cpu, a variant of these graphs that stores its per-point "
        "results straight into buffers the caller gives (the C++ dispatcher then copies "
        "nothing; e.g. '--into forward jacobian'; default: none)",
    )
    for boundary, flag in renames.FLAGS.items():
        what = {
            "inputs": "an input",
            "outputs": "an output",
            "parameters": "a promoted parameter (model.E or E)",
        }[boundary]
        parser.add_argument(
            flag,
            dest=f"rename_{boundary}",
            action=Values,
            extend=True,
            default=[],
            metavar="OLD:NEW",
            help=f"give {what} of the compiled model another name: results, derivative keys, "
            "named_parameters() and messages use NEW; -d and -p keep the input file's names "
            "(default: none)",
        )
    parser.add_argument(
        "--dtype",
        choices=list(artifact.DTYPES),
        default="float64",
        help="floating-point dtype of the parameters and of every tensor the graphs take "
        "and return; float32 needs every Newton rel_tol >= 1e-6 (default: float64)",
    )
    parser.add_argument(
        "-j",
        "--jobs",
        type=positive_int,
        default=1,
        metavar="N",
        help="compile up to N graphs at once, each in its own process; every process "
        "runs a C++ compiler, so N above the number of cores does not help (default: 1)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="compile even the device folders that are up to date (default: skip them)",
    )
    parser.add_argument(
        "-o",
        "--output",
        dest="out",
        default="aoti",
        metavar="OUT",
        help="output folder (default: ./aoti)",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="show torch's warnings and the full traceback of a failed compile (default: off)",
    )
    # The usage shows FILE as required, but argparse must not require it: the values of
    # --device, -d, -p, --graphs, --into and --rename-* run up to the next option, so
    # '-d : model.i' takes model.i as a pair, and parse_args takes it back.
    parser.usage = parser.format_usage().removeprefix("usage: ").rstrip()
    file.nargs = "?"
    file.required = False
    return parser


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line, options before or after FILE.

    FILE given before the options, after them or between them is the lone positional.
    Given after an option of several values (``-d : model.i --model model``), it is the last
    of their values; it is taken back when it names an input file (ends in .i or exists)
    and leaves the option at least one value of its own.
    """
    parser = make_parser()
    args = parser.parse_args(argv)
    runs: list[tuple[str, bool, list[str]]] = vars(args).pop(RUNS, [])
    if args.file is not None:
        return args
    ends = [run for _, _, run in runs if len(run) > 1 and looks_like_file(run[-1])]
    if not ends:
        parser.error("the following arguments are required: FILE")
    if len(ends) > 1:
        parser.error(f"FILE given twice: '{ends[0][-1]}' and '{ends[1][-1]}'")
    args.file = ends[0].pop()
    values: dict[str, list[str]] = {}
    for dest, extend, run in runs:
        values[dest] = [*values.get(dest, []), *run] if extend else run
    for dest, value in values.items():
        setattr(args, dest, value)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)

    def body() -> int:
        root = hit.load(args.file)
        name = args.model if args.model is not None else only_model(args.file)
        check_model_name(model_section(root, name))
        devices = parse_devices(args.device)
        out = Path(args.out)
        check_targets(out, name, Path(args.file), devices)
        req = Request(
            file=args.file,
            model=name,
            pairs=tuple(args.pairs),
            params=tuple(args.params),
            graphs=tuple(args.graphs),
            into=tuple(args.into),
            rename_inputs=tuple(args.rename_inputs),
            rename_outputs=tuple(args.rename_outputs),
            rename_parameters=tuple(args.rename_parameters),
            dtype=args.dtype,
            verbose=args.verbose,
        )
        prep = prepare(req)
        compile_model(req, prep, devices, out, args.jobs, args.force)
        return 0

    return run_main("neml2-compile", body)


if __name__ == "__main__":
    sys.exit(main())
