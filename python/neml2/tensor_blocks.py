"""The ``[Tensors]`` blocks of an input file: named tensors that model options refer to by
name, and the per-file cache that the ``[Data]`` blocks (:mod:`neml2.data_blocks`) share.

``[Tensors]`` types (NEML2 3.1.0's):

* ``Python``: ``expr`` is a Python expression, or statements that assign ``result``,
  evaluated in the restricted namespace of :mod:`neml2.tensor_expr`; the file's other
  [Tensors] blocks are there by bare name.
* ``CSVScalar``, ``CSVSR2``, ``CSVVec``, ``CSVWR2``: columns of ``csv_file`` (relative to
  the input file's folder), chosen by ``variable`` (a prefix: ``s`` gives ``s_xx, s_yy,
  s_zz, s_yz, s_xz, s_xy`` for an SR2, ``v_x, v_y, v_z`` for a Vec, ``w_zy, w_xz, w_yx``
  for a WR2, ``s`` itself for a Scalar) or ``column_names``; one row per leading index.
  Columns are taken as stored (an SR2's shear columns are already Mandel components).

``[Data]`` types: ``CubicCrystal`` (``lattice_parameter``, ``slip_directions``,
``slip_planes``), giving a :class:`~neml2.data_blocks.CrystalGeometry` (read by
:mod:`neml2.data_blocks`).

Each block is evaluated once per parsed file (the cache is keyed by the file's root
:class:`~neml2.hit.Section`), however many options name it.
"""

from __future__ import annotations

import csv
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from . import tensor_expr
from .errors import HitError
from .hit import Section
from .tensor_expr import EXPR_TYPES, ExprError, TypedTensor
from .tensors import TYPES

if TYPE_CHECKING:
    from .data_blocks import CrystalGeometry

__all__ = [
    "CSV_TYPES",
    "TENSOR_TYPES",
    "evaluate_tensor_block",
    "resolve_tensor",
    "resolve_typed",
]

# ---------------------------------------------------------------------------------------
# the per-file cache
# ---------------------------------------------------------------------------------------


@dataclass
class _FileCache:
    """What one parsed file has evaluated so far."""

    tensors: dict[str, TypedTensor | torch.Tensor] = field(default_factory=dict)
    data: dict[str, CrystalGeometry] = field(default_factory=dict)
    #: the [Tensors] blocks being evaluated, outermost first (for cycle reports)
    evaluating: list[str] = field(default_factory=list)
    csv_files: dict[Path, dict[str, torch.Tensor]] = field(default_factory=dict)


_CACHES: dict[int, tuple[weakref.ref[Section], _FileCache]] = {}


def _root(section: Section) -> Section:
    while section.parent is not None:
        section = section.parent
    return section


def _cache(section: Section) -> _FileCache:
    root = _root(section)
    entry = _CACHES.get(id(root))
    if entry is not None and entry[0]() is root:
        return entry[1]
    cache = _FileCache()
    _CACHES[id(root)] = (weakref.ref(root), cache)
    weakref.finalize(root, _CACHES.pop, id(root), None)
    return cache


# ---------------------------------------------------------------------------------------
# [Tensors]
# ---------------------------------------------------------------------------------------

#: The CSV tensor types: their tensor type and the column suffixes of ``variable``.
CSV_TYPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "CSVScalar": ("Scalar", ("",)),
    "CSVSR2": ("SR2", ("_xx", "_yy", "_zz", "_yz", "_xz", "_xy")),
    "CSVVec": ("Vec", ("_x", "_y", "_z")),
    "CSVWR2": ("WR2", ("_zy", "_xz", "_yx")),
}
#: Every [Tensors] type and the options it takes (beside ``type``).
TENSOR_TYPES: dict[str, tuple[str, ...]] = {"Python": ("expr",)} | {
    name: ("csv_file", "variable", "column_names") for name in CSV_TYPES
}


def _blocks(root: Section, top: str) -> Section | None:
    return root.child(top)


def _missing_block(section: Section, key: str, top: str, name: str) -> HitError:
    blocks = _blocks(_root(section), top)
    defined = ", ".join(blocks.children) if blocks is not None and blocks.children else "none"
    return section.error(
        key, f"parameter '{key}': no [{top}] block named '{name}'; [{top}] blocks: {defined}"
    )


def _check_options(block: Section, allowed: tuple[str, ...], type_name: str) -> None:
    for key in block.params:
        if key != "type" and key not in allowed:
            raise block.error(
                key,
                f"[{block.full_name}]: {type_name} has no option '{key}'; its options: "
                f"type, {', '.join(allowed)}",
            )


def evaluate_tensor_block(root: Section, name: str) -> TypedTensor | torch.Tensor:
    """The value of ``[Tensors/<name>]`` of the file of ``root`` (evaluated once per file):
    a typed tensor, or a plain float64 tensor where the block gives one.

    Raises KeyError when there is no such block, HitError for a failure inside it.
    """
    cache = _cache(root)
    if name in cache.tensors:
        return cache.tensors[name]
    blocks = _blocks(_root(root), "Tensors")
    block = blocks.child(name) if blocks is not None else None
    if block is None:
        raise KeyError(name)
    if name in cache.evaluating:
        # reported at the block whose expression closes the cycle
        chain = " -> ".join([*cache.evaluating[cache.evaluating.index(name) :], name])
        closing = blocks.child(cache.evaluating[-1]) if blocks is not None else None
        raise (closing or block).error(
            "expr",
            f"[Tensors/{cache.evaluating[-1]}]: [Tensors] blocks refer to each other "
            f"in a cycle: {chain}",
        )
    cache.evaluating.append(name)
    try:
        value = _evaluate_block(block)
    finally:
        cache.evaluating.pop()
    cache.tensors[name] = value
    return value


def _evaluate_block(block: Section) -> TypedTensor | torch.Tensor:
    type_name = block.string("type")
    if type_name not in TENSOR_TYPES:
        raise block.error(
            "type",
            f"[{block.full_name}]: unknown [Tensors] type '{type_name}'; known types: "
            f"{', '.join(TENSOR_TYPES)}",
        )
    _check_options(block, TENSOR_TYPES[type_name], type_name)
    if type_name == "Python":
        return _python_block(block)
    return _csv_block(block, type_name)


class _Namespace(dict):  # type: ignore[type-arg]
    """An expression's namespace; the file's [Tensors] blocks are looked up on first use."""

    def __init__(self, root: Section, names: set[str]) -> None:
        super().__init__(tensor_expr.base_namespace())
        self.root = root
        self.blocks = names

    def __missing__(self, key: str) -> Any:
        if key not in self.blocks:
            raise KeyError(key)
        value = evaluate_tensor_block(self.root, key)
        # a copy: in-place changes inside one expression stay out of the cache
        if isinstance(value, TypedTensor):
            value = type(value)(value.data.clone(), value.sub_batch_ndim)
        else:
            value = value.clone()
        self[key] = value
        return value


def _python_block(block: Section) -> TypedTensor | torch.Tensor:
    expr = block.get("expr")
    root = _root(block)
    tensors = root.child("Tensors")
    names = set(tensors.children) - {block.name} if tensors is not None else set()
    names |= {block.name}  # so that a self-reference reports a cycle, not an unknown name
    namespace = _Namespace(root, names)
    try:
        value = tensor_expr.evaluate(tensor_expr.dedent_code(expr.text), namespace, names)
    except ExprError as err:
        line = expr.line + err.line - 1
        raise HitError(block.path, line, f"[{block.full_name}]: {err.message}") from None
    return _as_value(block, value)


def _as_value(block: Section, value: Any) -> TypedTensor | torch.Tensor:
    """A block's result as a typed tensor or a plain float64 tensor."""
    if isinstance(value, TypedTensor):
        return value
    if isinstance(value, tensor_expr.Region):
        return value.tensor
    try:
        tensor = value if isinstance(value, torch.Tensor) else torch.as_tensor(value)
    except (TypeError, ValueError, RuntimeError):
        tensor = None
    if tensor is None or tensor.is_complex() or tensor.dtype == torch.bool:
        raise block.error(
            "expr",
            f"[{block.full_name}]: the expression gave a {type(value).__name__}, not a tensor",
        )
    return tensor.detach().to(torch.float64)


def _csv_block(block: Section, type_name: str) -> TypedTensor:
    tensor_type, suffixes = CSV_TYPES[type_name]
    path = _csv_path(block)
    columns = _read_csv(block, path)
    variable = block.string("variable", "")
    explicit = block.strings("column_names", [])
    if variable and explicit:
        raise block.error(
            "column_names",
            f"[{block.full_name}]: give either 'variable' or 'column_names', not both",
        )
    if explicit:
        key, names = "column_names", explicit
        if len(names) != len(suffixes):
            raise block.error(
                key,
                f"[{block.full_name}]: a {type_name} takes {len(suffixes)} column"
                f"{'s' if len(suffixes) > 1 else ''}, got {len(names)}",
            )
    elif variable:
        key, names = "variable", [variable + s for s in suffixes]
    else:
        raise block.error(
            None, f"[{block.full_name}]: {type_name} needs 'variable' or 'column_names'"
        )
    missing = [n for n in names if n not in columns]
    if missing:
        raise block.error(
            key,
            f"[{block.full_name}]: column{'s' if len(missing) > 1 else ''} "
            f"{', '.join(missing)} not in {path}; its columns: {', '.join(columns)}",
        )
    data = torch.stack([columns[n] for n in names], -1)
    return EXPR_TYPES[tensor_type](data.squeeze(-1) if tensor_type == "Scalar" else data)


def _csv_path(block: Section) -> Path:
    text = block.string("csv_file")
    path = Path(text)
    if not path.is_absolute():
        folder = Path(block.path).parent if block.path != "<string>" else Path.cwd()
        path = folder / path
    if not path.is_file():
        raise block.error("csv_file", f"[{block.full_name}]: CSV file '{text}' not found ({path})")
    return path


def _read_csv(block: Section, path: Path) -> dict[str, torch.Tensor]:
    """Every column of a CSV file with a header row, as float64 tensors (read once per
    input file)."""
    cache = _cache(block)
    if path in cache.csv_files:
        return cache.csv_files[path]
    where = f"[{block.full_name}]: {path}"
    try:
        with path.open(newline="") as handle:
            rows = [row for row in csv.reader(handle) if row]
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise block.error("csv_file", f"{where}: cannot read: {err}") from None
    if not rows:
        raise block.error("csv_file", f"{where}: empty file, expected a header row")
    header = [h.strip() for h in rows[0]]
    values: list[list[float]] = []
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise block.error(
                "csv_file",
                f"{where}: row {number} has {len(row)} fields, the header has {len(header)}",
            )
        try:
            values.append([float(v) for v in row])
        except ValueError:
            bad = next(v for v in row if not _is_number(v))
            raise block.error(
                "csv_file", f"{where}: row {number}: '{bad}' is not a number"
            ) from None
    table = torch.tensor(values, dtype=torch.float64).reshape(len(values), len(header))
    columns = {name: table[:, i] for i, name in enumerate(header)}
    cache.csv_files[path] = columns
    return columns


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def resolve_typed(section: Section, key: str, name: str, type_name: str) -> TypedTensor:
    """The tensor of ``[Tensors/<name>]`` for option ``key`` of ``section`` as a typed
    tensor of ``type_name`` (its ``sub_batch_ndim`` says how many of its leading axes
    NEML2 calls sub-batch axes); a plain tensor is accepted when its trailing dimensions
    are the type's base shape."""
    if type_name not in TYPES:
        raise section.error(key, f"parameter '{key}': unknown tensor type '{type_name}'")
    want = EXPR_TYPES[type_name]
    try:
        value = evaluate_tensor_block(section, name)
    except KeyError:
        raise _missing_block(section, key, "Tensors", name) from None
    if isinstance(value, TypedTensor):
        if type(value) is not want:
            raise section.error(
                key,
                f"parameter '{key}' takes type {type_name}, but [Tensors/{name}] is of "
                f"type {value.TYPE}",
            )
        return type(value)(value.data.clone(), value.sub_batch_ndim)
    base = TYPES[type_name]
    shape = tuple(value.shape)
    if len(shape) < len(base) or shape[len(shape) - len(base) :] != base:
        raise section.error(
            key,
            f"parameter '{key}' takes type {type_name} (base shape {base}), but "
            f"[Tensors/{name}] is a plain tensor of shape {shape}",
        )
    return want(value.clone())


def resolve_tensor(section: Section, key: str, name: str, type_name: str) -> torch.Tensor:
    """The tensor of ``[Tensors/<name>]`` for option ``key`` of ``section``, whose trailing
    dimensions are the base shape of ``type_name`` (float64; leading axes, a table's
    points for instance, are kept)."""
    return resolve_typed(section, key, name, type_name).data
