"""The checks of ``model_meta.json`` that ``artifact/Meta.h`` makes: every field, its
type and the consistency of the fields with each other (:func:`check_meta`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..errors import ArtifactError
from ..solvers import MAX_ITS_LIMIT, SETTINGS
from .common import COUNT_DTYPE, GRAPHS, MAX_SIZE, META_DTYPES, ROLES, Meta


def kind_name(value: Any) -> str:
    """What a JSON value is, as the C++ reader says it (``a string``, ``an array``, ...)."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "null"


class _Reader:
    """Accessors that turn a missing or mistyped field into an error naming file and field."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, what: str) -> ArtifactError:
        return ArtifactError(f"{self.path}: {what}")

    def get(self, obj: Any, key: str, kind: str, where: str = "") -> Any:
        if not isinstance(obj, dict):
            raise self.fail(f"{where or 'the top level'} must be an object")
        if key not in obj:
            raise self.fail(f"missing field '{where}{key}'")
        found = kind_name(obj[key])
        if found != kind:
            raise self.fail(f"field '{where}{key}' must be {kind}, found {found}")
        return obj[key]

    def text(self, obj: Any, key: str, where: str = "") -> str:
        value: str = self.get(obj, key, "a string", where)
        return value

    def integer(self, value: Any, what: str) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if (
            isinstance(value, float)
            and math.isfinite(value)
            and abs(value) < 9.2e18
            and value == int(value)
        ):
            return int(value)
        raise self.fail(f"{what} must be an integer")

    def variables(self, root: Meta, key: str, with_value: bool) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for i, entry in enumerate(self.get(root, key, "an array")):
            where = f"{key}[{i}]."
            name = self.text(entry, "name", where)
            if not name:
                raise self.fail(f"field '{where}name' is empty")
            numel = 1
            shape = []
            for d in self.get(entry, "shape", "an array", where):
                n = self.integer(d, f"field '{where}shape'")
                if n < 0 or n > MAX_SIZE:
                    raise self.fail(f"field '{where}shape' has an invalid size {n}")
                shape.append(n)
                numel *= n
                if numel > MAX_SIZE:
                    raise self.fail(f"field '{where}shape' is too large")
            if "sub_batch" in entry:
                if not isinstance(entry["sub_batch"], list):
                    raise self.fail(f"field '{where}sub_batch' must be an array")
                sub = [self.integer(d, f"field '{where}sub_batch'") for d in entry["sub_batch"]]
                if shape[: len(sub)] != sub:
                    raise self.fail(
                        f"field '{where}sub_batch' must be the leading axes of its shape"
                    )
            if with_value:
                values = self.get(entry, "value", "an array", where)
                if not all(kind_name(x) == "a number" for x in values):
                    raise self.fail(f"field '{where}value' must hold numbers")
                if len(values) != numel:
                    raise self.fail(
                        f"field '{where}value' has {len(values)} numbers, shape needs {numel}"
                    )
            original = name
            if "renamed_from" in entry:
                original = self.text(entry, "renamed_from", where)
                if not original:
                    raise self.fail(f"field '{where}renamed_from' is empty")
            for prev in out:
                if prev["name"] == name:
                    raise self.fail(f"duplicate name '{name}' in '{key}'")
                if prev.get("renamed_from", prev["name"]) == original:
                    raise self.fail(f"duplicate original name '{original}' in '{key}'")
            out.append(entry)
        return out

    def derivatives(self, root: Meta, key: str) -> None:
        if key not in root:
            return
        if not isinstance(root[key], list):
            raise self.fail(f"field '{key}' must be an array")
        for i, entry in enumerate(root[key]):
            where = f"{key}[{i}]."
            self.text(entry, "of", where)
            self.text(entry, "wrt", where)
            self.get(entry, "batched", "a boolean", where)

    def settings(self, root: Meta, dtype: str) -> list[str]:
        """The names of ``settings`` (absent: none), each checked: per solver its
        ``abs_tol``, ``rel_tol`` and ``max_its`` in that order, each solver once; a
        tolerance a finite number >= 0 of the meta's dtype, ``max_its`` an int64
        integer >= 1."""
        if "settings" not in root:
            return []
        names: list[str] = []
        solvers: list[str] = []
        for i, entry in enumerate(self.get(root, "settings", "an array")):
            where = f"settings[{i}]."
            name = self.text(entry, "name", where)
            solver, _, key = name.rpartition(".")
            expected = SETTINGS[i % len(SETTINGS)]
            if i % len(SETTINGS) == 0:
                if solver in solvers:
                    raise self.fail(f"duplicate name '{name}' in 'settings'")
                solvers.append(solver)
            if not solver or solver != solvers[-1] or key != expected:
                want = f"{solvers[-1] or '<solver>'}.{expected}"
                raise self.fail(
                    f"field '{where}name' is '{name}', expected '{want}' (each solver's "
                    "abs_tol, rel_tol and max_its, in that order)"
                )
            want = COUNT_DTYPE if key == "max_its" else dtype
            found = self.text(entry, "dtype", where)
            if found != want:
                raise self.fail(f"field '{where}dtype' is '{found}', expected '{want}'")
            value = self.get(entry, "value", "a number", where)
            if key == "max_its":
                count = self.integer(value, f"field '{where}value'")
                if not 1 <= count <= MAX_ITS_LIMIT:
                    raise self.fail(f"field '{where}value' must be an integer >= 1, got {count}")
            elif not (math.isfinite(value) and value >= 0):
                raise self.fail(f"field '{where}value' must be a finite number >= 0, got {value}")
            names.append(name)
        if len(names) % len(SETTINGS):
            raise self.fail(
                f"field 'settings' ends in '{names[-1]}': each solver has abs_tol, rel_tol "
                "and max_its"
            )
        return names

    def slots(self, graph: Any, key: str, where: str) -> list[dict[str, Any]]:
        slots: list[dict[str, Any]] = self.get(graph, key, "an array", where)
        for i, slot in enumerate(slots):
            w = f"{where}{key}[{i}]."
            role = self.text(slot, "role", w)
            if role not in ROLES:
                raise self.fail(f"field '{w}role' has unknown role '{role}'")
            if role == "derivative":
                self.text(slot, "of", w)
                self.text(slot, "wrt", w)
            else:
                self.text(slot, "name", w)
            for flag in ("per_point", "batched"):  # a per-point variant's marks
                if flag in slot:
                    self.get(slot, flag, "a boolean", w)
        return slots

    def per_point(self, root: Meta, params: list[str]) -> list[str]:
        """The names of ``per_point`` (absent: none): promoted parameters, each once."""
        if "per_point" not in root:
            return []
        names: list[str] = []
        for i, name in enumerate(self.get(root, "per_point", "an array")):
            where = f"per_point[{i}]"
            if not isinstance(name, str):
                raise self.fail(f"field '{where}' is not a string")
            if name not in params:
                raise self.fail(
                    f"field '{where}' names '{name}', which is not a promoted parameter"
                )
            if name in names:
                raise self.fail(f"field 'per_point' lists '{name}' twice")
            names.append(name)
        return names

    def graph(
        self, path: Path, spec: Any, where: str, known: dict[str, set[str]], settings: list[str]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """One graph entry (a graph or its per-point variant): its files present, its
        arguments known and its ``setting`` arguments every entry of ``settings`` in order;
        its args and returns."""
        files = [self.text(spec, "file", where)]
        args = self.slots(spec, "args", where)
        returns = self.slots(spec, "returns", where)
        if isinstance(spec, dict) and "into" in spec:
            files.append(self.text(spec, "into", where))
        for name in files:
            if not (path.parent / name).is_file():
                raise self.fail(f"graph file '{path.parent / name}' is missing")
        for slot in args:
            if slot.get("name") not in known.get(slot["role"], set()):
                raise self.fail(
                    f"{where}args names '{slot.get('name', '')}', "
                    "which is not a variable of that role"
                )
        taken = [slot["name"] for slot in args if slot["role"] == "setting"]
        if taken != settings:
            raise self.fail(
                f"{where}args takes the settings [{', '.join(taken)}], expected every entry "
                f"of 'settings' in its order: [{', '.join(settings)}]"
            )
        return args, returns

    def variant(
        self,
        graph: tuple[list[dict[str, Any]], list[dict[str, Any]]],
        variant: tuple[list[dict[str, Any]], list[dict[str, Any]]],
        per_point: list[str],
        where: str,
    ) -> None:
        """A per-point variant has its graph's slots in its graph's order, its arguments and
        adjoints of the ``per_point`` parameters marked ``per_point`` (no others), and says
        of each derivative whether it is ``batched`` (of no other slot)."""
        if not per_point:
            raise self.fail(f"field '{where[:-1]}' is present but 'per_point' lists no parameter")
        keys = ("of", "wrt", "name")
        for key, theirs, mine in zip(("args", "returns"), graph, variant, strict=True):
            if len(mine) != len(theirs):
                raise self.fail(
                    f"field '{where}{key}' has {len(mine)} slots, the graph has {len(theirs)}"
                )
            for i, (slot, their) in enumerate(zip(mine, theirs, strict=True)):
                w = f"{where}{key}[{i}]"
                if slot["role"] != their["role"] or any(slot.get(k) != their.get(k) for k in keys):
                    raise self.fail(f"field '{w}' is not the graph's slot in that place")
                marked = slot["role"] in ("parameter", "adjoint") and slot["name"] in per_point
                if (slot.get("per_point") is True) != marked:
                    raise self.fail(
                        f"field '{w}.per_point' must be {'true' if marked else 'absent'} "
                        f"for '{slot.get('name', '')}'"
                    )
                if (slot["role"] == "derivative") != ("batched" in slot):
                    raise self.fail(
                        f"field '{w}.batched' must be given for a derivative and only there"
                    )

    def plain(self, slots: list[dict[str, Any]], where: str, key: str) -> None:
        """A graph's own slots carry no per-point variant's marks."""
        for i, slot in enumerate(slots):
            for flag in ("per_point", "batched"):
                if flag in slot:
                    raise self.fail(
                        f"field '{where}{key}[{i}].{flag}' belongs to a graph's per-point "
                        "variant (graphs.<graph>.per_point)"
                    )


def check_meta(path: Path, meta: Any) -> None:
    """Check every field of ``meta`` (read from ``path``) as ``read_meta`` in Meta.h does.

    The checks of schema, device and torch version are artifact.read_meta's; this adds
    the type of every field, the variables' shapes and values, derivative pairs and graph
    slots that name known variables, and graph files that exist.
    """
    r = _Reader(path)
    if not isinstance(meta, dict):
        raise r.fail("expected a JSON object at the top level")
    for key in ("model", "type", "device", "torch_version"):
        r.text(meta, key)
    dtype = r.text(meta, "dtype")
    if dtype not in META_DTYPES:
        raise r.fail(f"unsupported dtype '{dtype}' (expected float64 or float32)")
    inputs = {v["name"] for v in r.variables(meta, "inputs", False)}
    outputs = {v["name"] for v in r.variables(meta, "outputs", False)}
    listed = [v["name"] for v in r.variables(meta, "parameters", True)]
    params = set(listed)
    per_point = r.per_point(meta, listed)
    settings = r.settings(meta, dtype)
    r.derivatives(meta, "derivatives")
    r.derivatives(meta, "param_derivatives")
    if not inputs or not outputs:
        raise r.fail("a model needs at least one input and one output")
    for d in meta.get("derivatives", []):
        if d["of"] not in outputs or d["wrt"] not in inputs:
            raise r.fail(f"derivative pair {d['of']}:{d['wrt']} names an unknown variable")
    for d in meta.get("param_derivatives", []):
        if d["of"] not in outputs or d["wrt"] not in params:
            raise r.fail(f"parameter derivative {d['of']}:{d['wrt']} names an unknown variable")
    if meta.get("status") is not None:
        r.text(meta["status"], "converged", "status.")
        r.text(meta["status"], "residual", "status.")
    graphs = r.get(meta, "graphs", "an object")
    known = {
        "input": inputs,
        "tangent": inputs,
        "parameter": params,
        "setting": set(settings),
        "cotangent": outputs,
    }
    for graph in GRAPHS:
        if graph not in graphs:
            continue
        where = f"graphs.{graph}."
        spec = graphs[graph]
        entry = r.graph(path, spec, where, known, settings)
        for key, slots in zip(("args", "returns"), entry, strict=True):
            r.plain(slots, where, key)
        if "per_point" in spec:
            w = f"{where}per_point."
            variant = r.get(spec, "per_point", "an object", where)
            r.variant(entry, r.graph(path, variant, w, known, settings), per_point, w)
        elif per_point:
            raise r.fail(f"field '{where}per_point' is missing: 'per_point' lists parameters")
    if "forward" not in graphs:
        raise r.fail("missing field 'graphs.forward'")
