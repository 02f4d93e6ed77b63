"""The checks the C++ loader makes on a compiled artifact, made from Python too.

``include/neml2/aoti`` refuses a damaged or inconsistent artifact before it runs it:
``artifact/Meta.h`` checks every field of ``model_meta.json`` and its type,
``detail/zip.h`` the CRC-32 of every member of a ``.pt2`` before torch opens the library
inside it, and ``Model.h`` each graph's call spec and the returns of one call on one point
against the meta. :func:`check_meta` and :func:`check_package` make the same checks with
the same messages; :func:`check_call_spec` and :func:`check_returns` those that need a
loaded graph. A failed check raises :class:`~neml2.errors.ArtifactError`, which the
command-line tools print as one line.

Two checks go further than the C++ loader and need no call: a package whose archive is
named after another graph of the model (``jacobian.pt2`` copied over ``forward.pt2``), and
the argument dtypes and sizes that torch writes into the package's generated source.
"""

from __future__ import annotations

import json
import math
import re
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from .errors import ArtifactError
from .solvers import MAX_ITS_LIMIT, SETTINGS

#: The graphs a model may carry, as in artifact.GRAPHS (repeated here to avoid a cycle).
GRAPHS = ("forward", "jvp", "jacobian", "param_jacobian", "param_vjp")
#: The suffix of an in-place variant's file name (``forward_into.pt2``).
INTO_SUFFIX = "_into"
ROLES = (
    "input",
    "parameter",
    "setting",
    "tangent",
    "cotangent",
    "output",
    "derivative",
    "adjoint",
    "converged",
    "residual",
)
#: Argument roles that carry the batch axis in front of the variable's shape.
BATCHED_ARGS = ("input", "tangent", "cotangent")
#: The advice every mismatch between graph files and meta ends with (C++ wording).
MISMATCH = (
    "the graph files and model_meta.json do not match; recompile the model with neml2-compile"
)
#: The C++ (c10) names of the dtypes a graph returns, for messages.
DTYPE_NAMES = {torch.float64: "Double", torch.float32: "Float", torch.bool: "Bool"}
#: model_meta.json's dtype spellings.
META_DTYPES = {"float64": torch.float64, "float32": torch.float32}
#: The largest size of one axis, and of one variable, that the C++ reader accepts.
MAX_SIZE = 1 << 31
#: The dtype of a ``max_its`` setting (the tolerances have the meta's dtype).
COUNT_DTYPE = "int64"

Meta = dict[str, Any]


def dtype_name(dtype: torch.dtype) -> str:
    """``Double`` for ``torch.float64``: how the C++ messages name a dtype."""
    return DTYPE_NAMES.get(dtype, str(dtype).removeprefix("torch."))


def shape_str(shape: Sequence[int | str]) -> str:
    """``(6,)``, ``(1, 6)``, ``()``: a shape as the C++ messages write it."""
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


# --- model_meta.json ------------------------------------------------------------------


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
        return slots


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
    params = {v["name"] for v in r.variables(meta, "parameters", True)}
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
        files = [r.text(spec, "file", where)]
        args = r.slots(spec, "args", where)
        r.slots(spec, "returns", where)
        if isinstance(spec, dict) and "into" in spec:
            files.append(r.text(spec, "into", where))
        for name in files:
            if not (path.parent / name).is_file():
                raise r.fail(f"graph file '{path.parent / name}' is missing")
        for slot in args:
            if slot.get("name") not in known.get(slot["role"], set()):
                raise r.fail(
                    f"{where}args names '{slot.get('name', '')}', "
                    "which is not a variable of that role"
                )
        taken = [slot["name"] for slot in args if slot["role"] == "setting"]
        if taken != settings:
            raise r.fail(
                f"{where}args takes the settings [{', '.join(taken)}], expected every entry "
                f"of 'settings' in its order: [{', '.join(settings)}]"
            )
    if "forward" not in graphs:
        raise r.fail("missing field 'graphs.forward'")


# --- the .pt2 packages ----------------------------------------------------------------


def zip_damage(path: Path) -> str:
    """Why the zip archive ``path`` is damaged, or ``""`` when every member matches its CRC-32.

    torch's package reader checks no CRC: a flipped byte in the shared library inside a
    package would be loaded and crash the process at its first call (detail/zip.h).
    """
    try:
        size = path.stat().st_size
    except OSError:
        return "cannot be read"
    if size < 22:
        return f"not a zip archive ({size} bytes)"
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as err:
        if str(err) == "File is not a zip file":
            return "no end-of-central-directory record: the file is truncated or not a zip archive"
        return f"the central directory is damaged ({err})"
    except OSError:
        return "cannot be read"
    with archive:
        members = archive.infolist()
        if not members:
            return "the archive holds no files"
        for info in members:
            if info.flag_bits & 1:
                continue  # encrypted: not written by neml2-compile, left to the loader
            crc = 0
            try:
                with archive.open(info) as data:
                    while chunk := data.read(1 << 20):
                        crc = zlib.crc32(chunk, crc)
            except zipfile.BadZipFile as err:
                if str(err).startswith("Bad CRC-32"):
                    return (
                        f"entry '{info.filename}' fails its CRC-32 check "
                        f"(stored 0x{info.CRC:08x}, computed 0x{crc:08x})"
                    )
                return f"the local header of entry '{info.filename}' is damaged ({err})"
            except (EOFError, OSError, zlib.error, NotImplementedError) as err:
                return f"cannot read entry '{info.filename}' ({err})"
    return ""


def check_package(context: str, graph: str, path: Path, meta: Meta, variant: bool) -> None:
    """Refuse a package that is damaged or was compiled for another graph, device or signature.

    Reads ``path`` without loading it: the CRC-32 of every member, the archive's name
    (torch names it after the file a graph was compiled into), the device in torch's
    metadata, and the argument dtypes and sizes in the generated wrapper source, where the
    package holds it. ``variant``: the file is the graph's in-place variant.
    """
    damage = zip_damage(path)
    if damage:
        raise ArtifactError(
            f"{context}: cannot load graph '{graph}' from '{path}': corrupted package: "
            f"{damage}: recompile the model with neml2-compile"
        )
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        roots = {name.split("/", 1)[0] for name in names}
        expected = graph + INTO_SUFFIX * variant
        known = {*GRAPHS, *(g + INTO_SUFFIX for g in GRAPHS)}
        if len(roots) == 1 and (root := roots.pop()) != expected and root in known:
            raise ArtifactError(
                f"{context}: graph '{graph}' in '{path}' holds the package of '{root}': " + MISMATCH
            )
        for name in names:
            if name.endswith("_metadata.json"):
                device = _json_field(archive.read(name), "AOTI_DEVICE_KEY")
                if device and device != meta["device"]:
                    raise ArtifactError(
                        f"{context}: graph '{graph}' in '{path}' was compiled for device "
                        f"'{device}', model_meta.json declares '{meta['device']}': " + MISMATCH
                    )
        wrappers = [n for n in names if n.endswith(".wrapper.cpp")]
        if len(wrappers) == 1:
            source = archive.read(wrappers[0]).decode("utf-8", "replace")
            check_wrapper_signature(context, graph, path, meta, source, variant)


def _json_field(data: bytes, key: str) -> str:
    try:
        value = json.loads(data)
    except ValueError:
        return ""
    field = value.get(key) if isinstance(value, dict) else None
    return field if isinstance(field, str) else ""


_CHECK_INPUT = re.compile(r"static void check_input_(\d+)\(")
_EXPECTED_DTYPE = re.compile(r"_expected_dtype = aoti_torch_dtype_(\w+)\(\)")
_FIXED_SIZE = re.compile(r"if \((\d+) != \w+_size\[(\d+)\]\)")


def wrapper_signature(source: str) -> list[tuple[str | None, dict[int, int]]] | None:
    """Per argument of a graph: the dtype and the fixed sizes (axis: size) that the wrapper
    source of an AOTInductor package checks its inputs against; None when the source has no
    such checks in the form torch 2.13 writes them (then nothing is checked)."""
    starts = list(_CHECK_INPUT.finditer(source))
    if not starts or [int(m.group(1)) for m in starts] != list(range(len(starts))):
        return None
    out: list[tuple[str | None, dict[int, int]]] = []
    for k, m in enumerate(starts):
        end = starts[k + 1].start() if k + 1 < len(starts) else source.find("\n}\n", m.end())
        block = source[m.end() : end if end > 0 else len(source)]
        dtype = _EXPECTED_DTYPE.search(block)
        sizes = {int(axis): int(n) for n, axis in _FIXED_SIZE.findall(block)}
        out.append((dtype.group(1) if dtype else None, sizes))
    return out


def setting_spec(meta: Meta, name: str) -> dict[str, Any]:
    """The entry of the meta's ``settings`` called ``name``."""
    spec: dict[str, Any] = next(s for s in meta.get("settings", []) if s["name"] == name)
    return spec


def arg_dtype(meta: Meta, slot: dict[str, Any]) -> str:
    """The dtype model_meta.json gives argument ``slot`` (a setting's own, else the meta's)."""
    if slot["role"] == "setting":
        dtype: str = setting_spec(meta, slot["name"])["dtype"]
        return dtype
    dtype = meta["dtype"]
    return dtype


def setting_tensor(spec: dict[str, Any], device: torch.device) -> torch.Tensor:
    """The 0-dim tensor of one entry of the meta's ``settings`` (its value and dtype)."""
    dtype = torch.int64 if spec["dtype"] == COUNT_DTYPE else META_DTYPES[spec["dtype"]]
    return torch.tensor(spec["value"], dtype=dtype, device=device)


def arg_shape(meta: Meta, slot: dict[str, Any]) -> list[int | str]:
    """The shape model_meta.json gives argument ``slot``: ``B`` first when batched."""
    if slot["role"] == "setting":
        return []
    table = {"parameter": "parameters", "cotangent": "outputs"}.get(slot["role"], "inputs")
    shape: list[int | str] = next(
        list(v["shape"]) for v in meta[table] if v["name"] == slot["name"]
    )
    return ["B", *shape] if slot["role"] in BATCHED_ARGS else shape


def check_wrapper_signature(
    context: str, graph: str, path: Path, meta: Meta, source: str, variant: bool = False
) -> None:
    """Compare the argument dtypes and sizes the package checks with model_meta.json's;
    ``variant``: an in-place variant, which takes its result buffers after the args."""
    signature = wrapper_signature(source)
    args = meta["graphs"][graph]["args"]
    if signature is None:
        return
    # An in-place variant takes one buffer per per-point return after the graph's args.
    if len(signature) < len(args) or (len(signature) != len(args) and not variant):
        raise ArtifactError(
            f"{context}: graph '{graph}' in '{path}' takes {len(signature)} inputs, "
            f"model_meta.json declares {len(args)}: " + MISMATCH
        )
    for i, (slot, (took, sizes)) in enumerate(zip(args, signature, strict=False)):
        dtype = arg_dtype(meta, slot)
        declared = arg_shape(meta, slot)
        wrong_size = any(
            axis >= len(declared) or declared[axis] not in ("B", n) for axis, n in sizes.items()
        )
        if (took is not None and took != dtype) or wrong_size:
            rank = max([len(declared), *(axis + 1 for axis in sizes)])
            taken = [sizes.get(a, declared[a] if a < len(declared) else "?") for a in range(rank)]
            raise ArtifactError(
                f"{context}: graph '{graph}' in '{path}' takes argument {i} "
                f"('{slot['name']}') as {shape_str(taken)} {took or dtype}, model_meta.json "
                f"declares {shape_str(declared)} {dtype}: " + MISMATCH
            )


# --- a loaded graph -------------------------------------------------------------------


def spec_leaves(spec: str) -> int | None:
    """The number of tensors in one part of a graph's call spec (the leaves of its pytree
    spec); None when the spec is in a form this reader does not know."""
    try:
        root = json.loads(spec)
    except ValueError:
        return None
    if not isinstance(root, list) or len(root) != 2:
        return None
    leaves = 0
    stack: list[tuple[Any, int]] = [(root[1], 0)]
    while stack:
        node, depth = stack.pop()
        if depth > 64 or not isinstance(node, dict):
            return None
        children = node.get("children_spec")
        if "type" not in node or not isinstance(children, list):
            return None
        leaves += node["type"] is None
        stack.extend((c, depth + 1) for c in children)
    return leaves


def check_call_spec(context: str, graph: str, path: Path, loaded: Any, spec: Meta) -> None:
    """Compare the number of arguments and returns of a loaded package with the meta's."""
    try:
        parts = list(loaded.loader.get_call_spec())
    except Exception:
        return  # no call spec: nothing to compare
    for part, what, declared in ((0, "takes", "args"), (1, "returns", "returns")):
        count = spec_leaves(parts[part]) if part < len(parts) else None
        if count is not None and count != len(spec[declared]):
            noun = "inputs" if part == 0 else "tensors"
            raise ArtifactError(
                f"{context}: graph '{graph}' in '{path}' {what} {count} {noun}, "
                f"model_meta.json declares {len(spec[declared])}: " + MISMATCH
            )


def return_shape(meta: Meta, slot: dict[str, Any], rows: int) -> list[int]:
    """The shape model_meta.json gives a return of a call on ``rows`` points."""

    def base(table: str, name: str) -> list[int]:
        return next((list(v["shape"]) for v in meta[table] if v["name"] == name), [])

    role = slot["role"]
    if role in ("converged", "residual"):
        return [rows]
    if role == "adjoint":
        return base("parameters", slot["name"])
    if role != "derivative":
        return [rows, *base("outputs", slot["name"])]
    of, wrt = slot["of"], slot["wrt"]
    is_input = any(v["name"] == wrt for v in meta["inputs"])
    shape = base("outputs", of) + base("inputs" if is_input else "parameters", wrt)
    pairs = meta.get("derivatives" if is_input else "param_derivatives", [])
    batched = next((d["batched"] for d in pairs if d["of"] == of and d["wrt"] == wrt), True)
    return [rows, *shape] if batched else shape


def check_returns(
    model: str,
    graph: str,
    meta: Meta,
    returns: Sequence[Any],
    rows: int,
    device: torch.device,
) -> None:
    """Refuse returns whose number, shape, dtype or device disagree with model_meta.json."""
    slots = meta["graphs"][graph]["returns"]
    if len(returns) != len(slots):
        raise ArtifactError(
            f"model '{model}': graph '{graph}' returned {len(returns)} tensors, "
            f"model_meta.json declares {len(slots)}"
        )
    dtype = META_DTYPES[meta["dtype"]]
    for i, (slot, r) in enumerate(zip(slots, returns, strict=True)):
        want = return_shape(meta, slot, rows)
        ok = (
            isinstance(r, torch.Tensor)
            and r.device.type == device.type
            and (slot["role"] == "converged" or r.dtype == dtype)
            and list(r.shape) == want
        )
        if ok:
            continue
        label = f"{slot['of']}:{slot['wrt']}" if slot["role"] == "derivative" else slot["name"]
        found = (
            f"{shape_str(list(r.shape))} {dtype_name(r.dtype)} on {r.device}"
            if isinstance(r, torch.Tensor)
            else "not a tensor"
        )
        raise ArtifactError(
            f"model '{model}': graph '{graph}' return {i} ('{label}') is {found}, "
            f"model_meta.json declares {shape_str(want)} {dtype_name(dtype)} on {device}: "
            + MISMATCH
        )


def probe_args(
    meta: Meta,
    graph: str,
    parameters: dict[str, torch.Tensor],
    device: torch.device,
    settings: dict[str, torch.Tensor] | None = None,
) -> list[torch.Tensor]:
    """One point of zeros per batched argument, parameters as they are, settings as given
    (by default the meta's values): the loader's probe.

    Each batched argument is the start of a zero buffer far larger than the meta says, so
    that a graph that reads more than the meta declares reads zeros, not foreign memory.
    """
    dtype = META_DTYPES[meta["dtype"]]
    args = []
    for slot in meta["graphs"][graph]["args"]:
        if slot["role"] == "parameter":
            args.append(parameters[slot["name"]])
            continue
        if slot["role"] == "setting":
            given = (settings or {}).get(slot["name"])
            spec = setting_spec(meta, slot["name"])
            args.append(given if given is not None else setting_tensor(spec, device))
            continue
        shape = [1, *(int(n) for n in arg_shape(meta, slot)[1:])]
        numel = math.prod(shape)
        buffer = torch.zeros(16 * numel + 4096, dtype=torch.float64, device=device)
        args.append(buffer.view(dtype)[:numel].view(shape))
    return args
