"""neml2-compile: export a model's graphs with torch.export and compile each with AOTInductor.

Writes ``<out>/<model>_aoti.i`` and ``<out>/<model>/<device>/`` (model_meta.json and one
``.pt2`` per graph) as doc/artifacts.md specifies.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from . import artifact, hit
from .cli import parse_device, run_main
from .errors import Neml2Error
from .models import Model, build_model, model_section
from .models.base import Pair

#: Batch size of the example inputs. Inductor takes it as the size hint of the dynamic
#: batch dimension, and with a small hint its CPU code generator judges the loops too
#: short to parallelize; a realistic hint keeps the OpenMP loop.
EXAMPLE_BATCH = 4096

#: Batched argument roles (dim 0 is the dynamic batch); every other role is unbatched.
BATCHED_ROLES = frozenset({"input", "tangent", "cotangent"})
#: The two returns every graph of an implicit model appends (doc/artifacts.md, ``status``).
STATUS_RETURNS: list[dict[str, str]] = [
    {"role": "converged", "name": "converged"},
    {"role": "residual", "name": "residual"},
]

Spec = dict[str, Any]


@dataclass(frozen=True)
class Selection:
    """What to compile: derivative pairs (-d) and promoted parameters (-p), in model order."""

    pairs: list[Pair]
    params: list[str]

    def graphs(self) -> list[str]:
        wanted = {
            "forward": True,
            "jvp": bool(self.pairs),
            "jacobian": bool(self.pairs),
            "param_jacobian": bool(self.pairs and self.params),
            "param_vjp": bool(self.params),
        }
        return [g for g in artifact.GRAPHS if wanted[g]]


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
    """The positional arguments of a graph, in the contract's order."""
    args: list[Spec] = [{"role": "input", "name": v.name} for v in model.inputs]
    args += [{"role": "parameter", "name": p} for p in sel.params]
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
    turns into constants of the compiled package.
    """

    def __init__(self, model: Model, graph: str, sel: Selection) -> None:
        super().__init__()
        self.model = model
        self.graph = graph
        self.sel = sel
        self.args = graph_args(model, graph, sel)
        self.returns = graph_returns(model, graph, sel)
        self.baked = [name for name in model.parameters if name not in sel.params]
        for index, name in enumerate(self.baked):
            self.register_buffer(f"baked_{index}", model.parameters[name].detach().clone())

    def forward(self, *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
        by_role: dict[str, dict[str, torch.Tensor]] = {}
        for spec, tensor in zip(self.args, tensors, strict=True):
            by_role.setdefault(spec["role"], {})[spec["name"]] = tensor
        x = by_role.get("input", {})
        p = {name: getattr(self, f"baked_{i}") for i, name in enumerate(self.baked)}
        p.update(by_role.get("parameter", {}))
        model, sel = self.model, self.sel
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
        examples = []
        for spec in self.args:
            if spec["role"] == "parameter":
                examples.append(self.model.parameters[spec["name"]].to(device))
            else:
                shape = self.model.variable(spec["name"]).shape
                examples.append(
                    torch.rand((EXAMPLE_BATCH, *shape), dtype=self.model.dtype, device=device)
                )
        return tuple(examples)


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
    torch._inductor.aoti_compile_and_package(
        program, package_path=str(path), inductor_configs=inductor_configs(device)
    )


def variables_meta(variables: Sequence[Any]) -> list[Spec]:
    return [{"name": v.name, "shape": list(v.shape)} for v in variables]


def build_meta(model: Model, device: torch.device, sel: Selection) -> artifact.Meta:
    graphs = sel.graphs()
    param_blocks = "param_jacobian" in graphs
    dtype = str(model.dtype).removeprefix("torch.")
    return {
        "schema": artifact.SCHEMA,
        "model": model.name,
        "type": model.type_name,
        "device": device.type,
        "dtype": dtype,
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
        "graphs": {
            g: {
                "file": f"{g}.pt2",
                "args": graph_args(model, g, sel),
                "returns": graph_returns(model, g, sel),
            }
            for g in graphs
        },
    }


def compile_model(
    model: Model, devices: Sequence[torch.device], sel: Selection, out: Path, verbose: bool
) -> None:
    for device in devices:
        folder = out / model.name / device.type
        folder.mkdir(parents=True, exist_ok=True)
        # a graph left from an earlier run with other -d/-p must not outlive it
        for stale in (*(f"{g}.pt2" for g in artifact.GRAPHS), artifact.META_FILE):
            (folder / stale).unlink(missing_ok=True)
        model.to(device)
        for graph in sel.graphs():
            path = folder / f"{graph}.pt2"
            start = time.perf_counter()
            try:
                with warnings.catch_warnings():
                    if not verbose:
                        warnings.simplefilter("ignore")
                    compile_graph(Graph(model, graph, sel).to(device), device, path)
            except Exception as err:
                if verbose:
                    raise
                first = (str(err).strip().splitlines() or [""])[0]
                raise Neml2Error(
                    f"compiling {graph} for {device.type} failed: {type(err).__name__}: {first} "
                    "(rerun with --verbose for the full traceback)"
                ) from None
            print(f"{path}: compiled in {time.perf_counter() - start:.1f} s", flush=True)
        artifact.write_meta(folder, build_meta(model, device, sel))
    stub = artifact.stub_path(out, model.name)
    stub.write_text(artifact.stub_text(model.name))
    print(f"{stub}: written")


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="neml2-compile",
        description="Compile a material model into AOTInductor packages, one folder per device.",
    )
    parser.add_argument("file", metavar="FILE", help="model input file (.i)")
    parser.add_argument("--model", required=True, help="name of the model block in [Models]")
    parser.add_argument(
        "--device", nargs="+", default=["cpu"], help="device(s): cpu, cuda (default: cpu)"
    )
    parser.add_argument(
        "-d",
        dest="pairs",
        nargs="+",
        action="extend",
        default=[],
        metavar="PAIR",
        help="derivative pairs output:input to compile jvp/jacobian for; ':' for all",
    )
    parser.add_argument(
        "-p",
        dest="params",
        nargs="+",
        action="extend",
        default=[],
        metavar="NAME",
        help="parameters to promote to runtime inputs (E or model.E); ':' for all",
    )
    parser.add_argument("-o", dest="out", default="aoti", help="output folder (default: ./aoti)")
    parser.add_argument(
        "--verbose", action="store_true", help="show torch warnings and full tracebacks"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = make_parser().parse_args(argv)

    def body() -> int:
        root = hit.load(args.file)
        section = model_section(root, args.model)
        if section.string("type", "") == artifact.STUB_TYPE:
            raise section.error(
                "type", f"[{section.full_name}]: already a compiled model; compile its source .i"
            )
        model = build_model(section)
        sel = Selection(select_pairs(model, args.pairs), select_params(model, args.params))
        devices = parse_devices(args.device)
        compile_model(model, devices, sel, Path(args.out), args.verbose)
        return 0

    return run_main("neml2-compile", body)


if __name__ == "__main__":
    sys.exit(main())
