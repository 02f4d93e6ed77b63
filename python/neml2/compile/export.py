"""Graph modules, their export and AOTInductor compile, and the model_meta.json they
are described by: each graph's positional arguments and returns, in the contract's order
(doc/artifacts.md)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from .. import artifact, validate
from ..models import Model
from ..models.constants import collecting, given_constants
from ..models.points import with_per_point
from ..solvers import SETTINGS, Limits, given_settings, setting_names, solver_table
from .selection import INTO_SUFFIX, PER_POINT_SUFFIX, Selection

#: Batch size of the example inputs. Inductor takes it as the size hint of the dynamic
#: batch dimension, and with a small hint its CPU code generator judges the loops too
#: short to parallelize; a realistic hint keeps the OpenMP loop.
EXAMPLE_BATCH = 4096

#: Batched argument roles (dim 0 is the dynamic batch); every other role is unbatched, but
#: for the parameters a per-point variant takes per point (``"per_point": true``).
#: ``result`` is a caller's buffer an in-place variant (--into) writes a per-point return into.
BATCHED_ROLES = frozenset({"input", "tangent", "cotangent", "result"})
#: The two returns every graph of an implicit model appends (doc/artifacts.md, ``status``).
STATUS_RETURNS: list[dict[str, str]] = [
    {"role": "converged", "name": "converged"},
    {"role": "residual", "name": "residual"},
]

Spec = dict[str, Any]


def batched_arg(spec: Spec) -> bool:
    """Whether argument ``spec`` comes with the dynamic batch axis in front."""
    return spec["role"] in BATCHED_ROLES or bool(spec.get("per_point"))


def graph_args(model: Model, graph: str, sel: Selection, per_point: bool = False) -> list[Spec]:
    """The positional arguments of a graph, in the contract's order: inputs, promoted
    parameters, the solvers' run-time settings, then tangents or cotangents. In its
    per-point variant (``per_point``) the parameters of ``sel.per_point`` are marked."""
    args: list[Spec] = [{"role": "input", "name": v.name} for v in model.inputs]
    for p in sel.params:
        marked = per_point and p in sel.per_point
        args.append(
            {"role": "parameter", "name": p, "per_point": True}
            if marked
            else {"role": "parameter", "name": p}
        )
    args += [{"role": "setting", "name": name} for name in setting_names(model)]
    if graph == "jvp":
        wrt = {i for _, i in sel.pairs}
        args += [{"role": "tangent", "name": v.name} for v in model.inputs if v.name in wrt]
    elif graph == "param_vjp":
        args += [{"role": "cotangent", "name": v.name} for v in model.outputs]
    return args


def graph_returns(model: Model, graph: str, sel: Selection, per_point: bool = False) -> list[Spec]:
    """The outputs of a graph, in the contract's order; an implicit model's status last.

    In the per-point variant (``per_point``; ``model`` is then the model taking
    ``sel.per_point`` per point) every derivative says whether it is ``batched``, and the
    adjoint of a parameter of ``sel.per_point`` is marked ``per_point`` (one per point).
    """
    status = [dict(s) for s in STATUS_RETURNS] if model.implicit else []
    returns = regular_returns(model, graph, sel)
    if per_point:
        for ret in returns:
            if ret["role"] == "derivative":
                ret["batched"] = _batched(model, graph, ret)
            elif ret["role"] == "adjoint" and ret["name"] in sel.per_point:
                ret["per_point"] = True
    return returns + status


def _batched(model: Model, graph: str, ret: Spec) -> bool:
    """Whether the derivative return ``ret`` of ``graph`` comes with the batch axis."""
    if graph == "param_jacobian":
        return bool(model.param_jacobian_batched(ret["of"], ret["wrt"]))
    return bool(model.jacobian_batched(ret["of"], ret["wrt"]))


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
    into its rows of the result), rather than one for the whole batch or a status: an
    output, a tangent, a batched derivative, and a per-point variant's per-point adjoint."""
    if ret["role"] in ("output", "tangent"):
        return True
    if ret["role"] == "adjoint":
        return bool(ret.get("per_point"))
    if ret["role"] != "derivative":
        return False
    if "batched" in ret:
        return bool(ret["batched"])
    return _batched(model, graph, ret)


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
    into memory the caller owns. ``<graph>_per_point`` (and ``<graph>_per_point_into``) is
    the per-point variant: the parameters of ``sel.per_point`` arrive ``(B, *shape)``, and
    the model that takes them per point (:func:`~neml2.models.points.with_per_point`)
    computes the returns.
    """

    def __init__(
        self, model: Model, graph: str, sel: Selection, dtype: torch.dtype | None = None
    ) -> None:
        super().__init__()
        self.model = model
        #: The dtype of the example inputs (and so of the compiled graph's tensors).
        self.dtype = dtype or model.dtype
        self.into = graph.endswith(INTO_SUFFIX)
        graph = graph.removesuffix(INTO_SUFFIX)
        self.per_point = graph.endswith(PER_POINT_SUFFIX)
        self.graph = graph.removesuffix(PER_POINT_SUFFIX)
        if self.per_point:
            model = with_per_point(model, sel.per_point)
            self.model = model
        self.sel = sel
        self.args = graph_args(model, self.graph, sel, self.per_point)
        self.returns = graph_returns(model, self.graph, sel, self.per_point)
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
        #: the keys of the model's constants (neml2.models.constants), held as buffers
        #: ``constant_<i>`` once hold_constants() ran
        self.constants: list[str] = []

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
        held = {key: getattr(self, f"constant_{i}") for i, key in enumerate(self.constants)}
        # the solves read the setting arguments, the models their constants from the buffers
        with given_settings(solvers), given_constants(held):
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

    def hold_constants(self, args: Sequence[torch.Tensor]) -> None:
        """Register as buffers the constants the model makes when evaluated on ``args`` (the
        example arguments, on the graph's device), so that export lifts them as constants of
        that device (see :mod:`neml2.models.constants`)."""
        regular = args[: len(args) - self.into * len(self.written)]
        with torch.no_grad(), collecting() as seen:
            self.values(regular)
        for key, tensor in seen.items():
            if key not in self.constants:
                self.register_buffer(f"constant_{len(self.constants)}", tensor)
                self.constants.append(key)

    def example_args(self, device: torch.device) -> tuple[torch.Tensor, ...]:
        examples: list[torch.Tensor] = []
        for spec in self.args:
            if spec["role"] == "result":
                continue
            if spec["role"] == "parameter":
                value = self.model.parameters[spec["name"]].to(device, self.dtype)
                if spec.get("per_point"):
                    value = value.expand((EXAMPLE_BATCH, *value.shape)).clone()
                examples.append(value)
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


def export_graph(module: Graph, device: torch.device) -> torch.export.ExportedProgram:
    """The graph module exported with a dynamic batch dimension.

    A per-point variant evaluates models point by point with ``torch.func.vmap``, inside the
    ``while_loop`` of a Newton solve too. ``torch.export.export`` traces above functorch
    and records vmap as its own operations, whose nesting calls a ``while_loop`` body then
    loses (torch 2.13: the body's ``_vmap_increment_nesting`` is removed as dead code, and
    the graph fails with "your tensor may have escaped from inside a function being
    vmapped"); traced below functorch (``pre_dispatch=False``) the vmap is applied as the
    graph is traced and the graph holds plain batched operations.
    """
    batch = torch.export.Dim("batch", min=0)
    shapes = tuple({0: batch} if batched_arg(s) else None for s in module.args)
    args = module.example_args(device)
    module.hold_constants(args)
    try:
        from torch.export._trace import _export as below_functorch
    except ImportError:  # another torch: the public export, which may not hold vmap in a loop
        below_functorch = None
    if module.per_point and below_functorch is not None:
        program: torch.export.ExportedProgram = below_functorch(
            module, args, dynamic_shapes=(shapes,), strict=False, pre_dispatch=False
        )
        return program
    return torch.export.export(module, args, dynamic_shapes=(shapes,), strict=False)


def compile_graph(module: Graph, device: torch.device, path: Path) -> None:
    program = export_graph(module, device)
    configs = inductor_configs(device)
    try:
        torch._inductor.aoti_compile_and_package(
            program, package_path=str(path), inductor_configs=configs
        )
    except Exception as err:
        if not buffer_reuse_fault(err):
            raise
        # Inductor's buffer-reuse planner fails on some large graphs (torch 2.11: "End
        # index N out of bounds [0, N - 1]", or "Start index ...", from its peak-memory
        # estimate; the crystal model's CUDA graph meets the second); without buffer
        # reuse the same graph compiles, at the cost of more temporary memory
        torch._inductor.aoti_compile_and_package(
            program,
            package_path=str(path),
            inductor_configs={**configs, "allow_buffer_reuse": False},
        )


def buffer_reuse_fault(err: BaseException) -> bool:
    """Whether ``err`` is Inductor's buffer-reuse planner failing on its own estimate."""
    text = f"{err} {err.__cause__ or ''}"
    return "out of bounds" in text and ("End index" in text or "Start index" in text)


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
        **({"per_point": list(sel.per_point)} if sel.per_point else {}),
        "graphs": {g: graph_meta(model, g, sel, device) for g in graphs},
    }


def graph_meta(model: Model, graph: str, sel: Selection, device: torch.device) -> Spec:
    """A graph's entry of model_meta.json: its file, signature and in-place variant, and
    with --per-point its per-point variant (``per_point``: the same fields)."""
    spec: Spec = {
        "file": f"{graph}.pt2",
        "args": graph_args(model, graph, sel),
        "returns": graph_returns(model, graph, sel),
    }
    if graph in sel.into_graphs(device):
        spec["into"] = f"{graph}{INTO_SUFFIX}.pt2"
    if sel.per_point:
        taking = with_per_point(model, sel.per_point)
        name = graph + PER_POINT_SUFFIX
        variant: Spec = {
            "file": f"{name}.pt2",
            "args": graph_args(taking, graph, sel, per_point=True),
            "returns": graph_returns(taking, graph, sel, per_point=True),
        }
        if graph in sel.per_point_into_graphs(device):
            variant["into"] = f"{name}{INTO_SUFFIX}.pt2"
        spec["per_point"] = variant
    return spec


def dtype_text(dtype: torch.dtype) -> str:
    """``float64`` for ``torch.float64``: the spelling of ``--dtype`` and of model_meta.json."""
    return str(dtype).removeprefix("torch.")
