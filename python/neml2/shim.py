"""``load_model``: an eager model from a model ``.i``, or compiled graphs from an AOTI stub.

Both kinds answer the same calls: ``forward``, ``jvp``, ``jacobian``, ``param_jacobian``,
``param_vjp``, ``named_parameters``, ``set_parameter``, ``solver_settings`` and
``set_solver_settings``. The compiled kind runs on the device type of
``torch.get_default_device()``, loading ``<artifact_path>/<device type>/``; a call runs a
graph's per-point variant (``neml2-compile --per-point``) while a parameter holds one value
per point.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from . import artifact, hit, renames, validate
from .errors import ArtifactError, Neml2Error
from .models import Model, Variable, model_section
from .models.base import (
    Blocks,
    Status,
    Tensors,
    check_parameter,
    raise_if_failed,
    refuse_unknown,
)
from .models.batch import Batch, shape_text
from .models.sub_batch import build_with_settings
from .runtime import use_system_cxx_runtime
from .solvers import SETTINGS, checked_settings

#: The -d/-p options that produce each graph, for the "was not compiled" message.
_RECOMPILE_HINT = {
    "jvp": "-d :",
    "jacobian": "-d :",
    "param_jacobian": "-d : -p :",
    "param_vjp": "-p :",
}


def load_model(path: str | Path, name: str) -> Model | CompiledModel:
    """The model ``[Models/<name>]`` of ``path``, eager or compiled (``type = AOTIModel``)."""
    root = hit.load(path)
    section = model_section(root, name)
    device = torch.get_default_device()
    if section.string("type", "") == artifact.STUB_TYPE:
        return CompiledModel(Path(path), section, device)
    return build_with_settings(root, name).to(device)


def _variables(specs: list[dict[str, Any]]) -> list[Variable]:
    return [Variable(s["name"], tuple(s["shape"]), tuple(s.get("sub_batch", ()))) for s in specs]


class CompiledModel:
    """The AOTInductor graphs of one model on one device, called like a :class:`Model`."""

    def __init__(self, stub: Path, section: hit.Section, device: torch.device) -> None:
        folder = artifact.device_folder(stub, section, device.type)
        meta = artifact.read_meta(folder, device.type)
        self.name = section.name
        self.device = device
        self.meta = meta
        self.type_name: str = meta.get("type", artifact.STUB_TYPE)
        self.dtype = artifact.DTYPES[meta["dtype"]]
        self.inputs = _variables(meta["inputs"])
        self.outputs = _variables(meta["outputs"])
        self._variables = {v.name: v for v in (*self.inputs, *self.outputs)}
        #: original name -> new name of the variables neml2-compile renamed (--rename-*)
        self._renamed_inputs = renames.originals(meta["inputs"])
        self._renamed_outputs = renames.originals(meta["outputs"])
        #: new name -> the input file's name, which -d takes
        self._original = {new: old for old, new in self._renamed_inputs.items()}
        self._batched: dict[tuple[str, str], bool] = {
            (d["of"], d["wrt"]): d["batched"]
            for d in (*meta.get("derivatives", []), *meta.get("param_derivatives", []))
        }
        self.parameters: Tensors = {
            p["name"]: torch.tensor(p["value"], dtype=self.dtype, device=device).reshape(p["shape"])
            for p in meta["parameters"]
        }
        self._shapes = {p["name"]: tuple(p["shape"]) for p in meta["parameters"]}
        #: the promoted parameters that may hold one value per point (--per-point)
        self.per_point: list[str] = list(meta.get("per_point", []))
        #: original name -> new name of the parameters neml2-compile renamed
        self._renamed_parameters = renames.originals(meta["parameters"])
        #: solver -> {"abs_tol", "rel_tol", "max_its"}: the values the graphs take now
        self._solvers: dict[str, dict[str, Any]] = {}
        for spec in meta.get("settings", []):  # absent in an artifact from before settings
            solver, _, key = spec["name"].rpartition(".")
            value = int(spec["value"]) if key == "max_its" else float(spec["value"])
            self._solvers.setdefault(solver, {})[key] = value
        #: setting name -> the 0-dim tensor passed as that ``setting`` argument
        self._settings: Tensors = {}
        for solver in self._solvers:
            self._put_settings(solver)
        context = f"model '{self.name}' on {device}"
        self._graphs: dict[str, Any] = {}
        #: the graphs' per-point variants, by graph
        self._per_point_graphs: dict[str, Any] = {}
        for graph in artifact.GRAPHS:
            if graph in meta["graphs"]:
                spec = meta["graphs"][graph]
                self._graphs[graph] = _load_graph(context, graph, device, folder, meta, spec, False)
                if "per_point" in spec:
                    self._per_point_graphs[graph] = _load_graph(
                        context, graph, device, folder, meta, spec["per_point"], True
                    )
        self._probe()

    def _probe(self) -> None:
        """Call each graph once on one point of zeros and check its returns against the meta,
        as the C++ loader does: a graph file swapped for another graph of the model, or an
        edited dtype or shape in model_meta.json, is refused here instead of answering."""
        graphs = [(g, g, c, self.meta["graphs"][g]) for g, c in self._graphs.items()]
        graphs += [
            (g, g + validate.PER_POINT_SUFFIX, c, self.meta["graphs"][g]["per_point"])
            for g, c in self._per_point_graphs.items()
        ]
        with torch.no_grad():
            for graph, label, compiled, spec in graphs:
                args = validate.probe_args(
                    self.meta, graph, self.parameters, self.device, self._settings, spec
                )
                try:
                    returned = compiled(*args)
                except RuntimeError as err:
                    raise ArtifactError(
                        f"model '{self.name}': graph '{label}' fails on one point of zeros "
                        f"({_first_line(err)}): {validate.MISMATCH}"
                    ) from None
                validate.check_returns(self.name, label, self.meta, returned, 1, self.device, spec)

    def named_parameters(self) -> Tensors:
        """The live promoted parameters; changing one in place changes the next call."""
        return self.parameters

    def set_parameter(self, name: str, value: torch.Tensor) -> None:
        """Give the promoted parameter ``name`` the tensor ``value`` for the next calls: one
        value for every point, ``(*shape)``, or, for a parameter of :attr:`per_point`
        (``neml2-compile --per-point``), one per point, ``(B, *shape)``, whose B every call's
        batch must then be. Neml2Error for an unknown name, another dtype, device or shape,
        or a parameter that was not compiled per point given per point; then nothing is
        changed."""
        shape = self._shapes.get(name, ())
        current = self.parameters.get(name)
        known = list(self.parameters)
        renamed = self._renamed_parameters
        if check_parameter(self.name, name, value, current, shape, known, renamed):
            self._refuse_per_point(name)
        self.parameters[name] = value

    def _refuse_per_point(self, name: str) -> None:
        """Refuse a per-point value of ``name`` where it was not compiled per point."""
        if name in self.per_point:
            return
        original = next(
            (p.get("renamed_from", name) for p in self.meta["parameters"] if p["name"] == name),
            name,
        )
        raise Neml2Error(
            f"model '{self.name}': parameter '{name}' was not compiled per point: give it "
            f"shape {shape_text(self._shapes[name])}, or add --per-point {original} to "
            "neml2-compile"
        )

    def _per_point_now(self, call: Batch) -> list[str]:
        """The parameters that hold one value per point now, their B agreed with the call's."""
        points = []
        for name, value in self.parameters.items():
            if value.dim() == len(self._shapes[name]) + 1:
                self._refuse_per_point(name)
                call.agree(f"parameter '{name}'", int(value.shape[0]))
                points.append(name)
        return points

    @property
    def solver_settings(self) -> dict[str, dict[str, Any]]:
        """``{solver: {"abs_tol": float, "rel_tol": float, "max_its": int}}``: the values
        the next call passes for each solver of the model (the compiled ones until
        :meth:`set_solver_settings` changes them), in the meta's order; empty for an
        explicit model. A copy."""
        return {solver: dict(values) for solver, values in self._solvers.items()}

    def set_solver_settings(
        self,
        solver: str,
        *,
        abs_tol: float | None = None,
        rel_tol: float | None = None,
        max_its: int | None = None,
    ) -> None:
        """Change the tolerances or the iteration cap of ``solver`` (None: unchanged) for
        the next calls, without recompiling. Neml2Error for an unknown solver or a value
        not allowed (a tolerance is a finite number >= 0, ``max_its`` an integer >= 1);
        then nothing is changed. A float32 model rounds a tolerance to float32."""
        given = {"abs_tol": abs_tol, "rel_tol": rel_tol, "max_its": max_its}
        values = checked_settings(self.name, list(self._solvers), solver, given)
        self._solvers[solver].update(values)
        self._put_settings(solver)

    def _put_settings(self, solver: str) -> None:
        """The setting tensors of ``solver`` from its values, on the model's device."""
        for key in SETTINGS:
            dtype = torch.int64 if key == "max_its" else self.dtype
            value = self._solvers[solver][key]
            self._settings[f"{solver}.{key}"] = torch.tensor(value, dtype=dtype, device=self.device)

    def forward(self, inputs: Mapping[str, torch.Tensor]) -> Tensors:
        return self._call("forward", input=inputs)

    def jvp(
        self, inputs: Mapping[str, torch.Tensor], tangents: Mapping[str, torch.Tensor]
    ) -> Tensors:
        return self._call("jvp", input=inputs, tangent=tangents)

    def jacobian(self, inputs: Mapping[str, torch.Tensor]) -> Blocks:
        return self._call("jacobian", input=inputs)

    def param_jacobian(self, inputs: Mapping[str, torch.Tensor]) -> Blocks:
        return self._call("param_jacobian", input=inputs)

    def param_vjp(
        self, inputs: Mapping[str, torch.Tensor], cotangents: Mapping[str, torch.Tensor]
    ) -> Tensors:
        return self._call("param_vjp", input=inputs, cotangent=cotangents)

    def _call(self, graph: str, **given: Mapping[str, torch.Tensor]) -> dict[str, Any]:
        if graph not in self._graphs:
            pairs, params = bool(self.meta["derivatives"]), bool(self.meta["parameters"])
            left_out = {
                "jvp": pairs,
                "jacobian": pairs,
                "param_jacobian": pairs and params,
                "param_vjp": params,
            }
            hint = (
                f"neml2-compile --graphs left it out: add {graph} to --graphs"
                if left_out[graph]
                else f"recompile with neml2-compile {_RECOMPILE_HINT[graph]}"
            )
            raise Neml2Error(f"model '{self.name}': {graph} was not compiled; {hint}")
        spec = self.meta["graphs"][graph]
        call = Batch(self.name, self.dtype)  # zeros for a missing tangent in the graphs' dtype
        checked: dict[str, Tensors] = {}
        wanted_by_role: dict[str, list[Variable]] = {}
        for role, tensors in given.items():
            renamed = self._renamed_outputs if role == "cotangent" else self._renamed_inputs
            refuse_unknown(self.name, role, tensors, self.inputs, self.outputs, renamed)
            wanted = [self._variables[a["name"]] for a in spec["args"] if a["role"] == role]
            extra = sorted(set(tensors) - {v.name for v in wanted})
            if extra:
                original = self._original.get(extra[0], extra[0])  # -d takes the file's names
                raise Neml2Error(
                    f"model '{self.name}': no derivative pair with respect to '{extra[0]}' "
                    f"was compiled: add -d OUTPUT:{original} (or -d :) to neml2-compile"
                )
            checked[role] = call.take(tensors, wanted, role, missing_is_zero=role != "input")
            for name, tensor in checked[role].items():
                if tensor.dtype != self.dtype or tensor.device.type != self.device.type:
                    raise Neml2Error(
                        f"model '{self.name}': {role} '{name}' is {tensor.dtype} on "
                        f"{tensor.device}, expected {self.dtype} on {self.device.type}"
                    )
            wanted_by_role[role] = wanted
        # while a parameter holds one value per point, the graph's per-point variant runs,
        # with every parameter it takes per point as (B, *shape)
        points = self._per_point_now(call)
        compiled = self._graphs[graph]
        if points:
            spec, compiled = spec["per_point"], self._per_point_graphs[graph]
        for role, wanted in wanted_by_role.items():
            checked[role] = call.expand(checked[role], wanted)
        args = [
            self._parameter_arg(a, call)
            if a["role"] == "parameter"
            else self._settings[a["name"]]
            if a["role"] == "setting"
            else checked[a["role"]][a["name"]].contiguous()
            for a in spec["args"]
        ]
        returned = compiled(*args)
        result: dict[str, Any] = {}
        status: dict[str, torch.Tensor] = {}
        for ret, tensor in zip(spec["returns"], returned, strict=True):
            role = ret["role"]
            if role in ("converged", "residual"):
                status[role] = tensor
            elif role == "derivative":
                batched = ret.get("batched", self._batched.get((ret["of"], ret["wrt"]), True))
                result.setdefault(ret["of"], {})[ret["wrt"]] = (
                    call.unbatch_one(tensor) if batched else tensor
                )
            elif role == "adjoint":
                # a per-point adjoint of a parameter given shared: summed over the batch
                shared = ret.get("per_point") and ret["name"] not in points
                result[ret["name"]] = tensor.sum(0) if shared else tensor
            else:
                result[ret["name"]] = call.unbatch_one(tensor)
        if status:
            raise_if_failed(self.name, Status(status["converged"], status["residual"]))
        return result

    def _parameter_arg(self, slot: dict[str, Any], call: Batch) -> torch.Tensor:
        """The tensor a ``parameter`` argument takes: the parameter, and for one a per-point
        variant takes per point, ``(B, *shape)`` and contiguous (a shared value repeated)."""
        value = self.parameters[slot["name"]]
        if not slot.get("per_point"):
            return value
        shape = self._shapes[slot["name"]]
        if value.dim() == len(shape):
            value = value.expand((call.size or 0, *shape))
        return value.contiguous()


def _load_graph(
    context: str,
    graph: str,
    device: torch.device,
    folder: Path,
    meta: dict[str, Any],
    spec: dict[str, Any],
    per_point: bool,
) -> Any:
    """Check and load the package of ``graph`` (its per-point variant with ``per_point``)."""
    path = folder / spec["file"]
    label = graph + validate.PER_POINT_SUFFIX * per_point
    validate.check_package(context, graph, path, meta, variant=False, per_point=per_point)
    try:
        loaded = _load_package(path, device)
    except (RuntimeError, OSError) as err:
        raise ArtifactError(
            f"{context}: cannot load graph '{label}' from '{path}': {_first_line(err)}"
        ) from None
    validate.check_call_spec(context, label, path, loaded, spec)
    return loaded


def _first_line(err: BaseException) -> str:
    """The first line of an exception's message (torch's end in a C++ backtrace)."""
    return (str(err).strip().splitlines() or [type(err).__name__])[0]


def _load_package(path: Path, device: torch.device) -> Any:
    """Load one .pt2 for ``device`` (``cuda:1`` runs it on device 1)."""
    if not path.is_file():
        raise Neml2Error(f"missing compiled graph '{path}'")
    use_system_cxx_runtime()
    load = torch._inductor.aoti_load_package
    if device.type == "cuda" and device.index is not None:
        if "device_index" in inspect.signature(load).parameters:
            return load(str(path), device_index=device.index)
        with torch.cuda.device(device.index):
            return load(str(path))
    return load(str(path))
