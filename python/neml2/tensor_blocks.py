"""The ``[Tensors]`` and ``[Data]`` blocks of an input file: named tensors and crystal
geometries that model options refer to by name.

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
``slip_planes``), giving a :class:`CrystalGeometry`.

Each block is evaluated once per parsed file (the cache is keyed by the file's root
:class:`~neml2.hit.Section`), however many options name it.
"""

from __future__ import annotations

import csv
import math
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from . import tensor_expr
from .errors import HitError
from .hit import Section
from .tensor_expr import EXPR_TYPES, ExprError, TypedTensor
from .tensors import TYPES, full_to_sr2, full_to_wr2

__all__ = [
    "CSV_TYPES",
    "DATA_TYPES",
    "TENSOR_TYPES",
    "CrystalGeometry",
    "cubic_symmetry_operators",
    "evaluate_tensor_block",
    "resolve_data",
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


# ---------------------------------------------------------------------------------------
# [Data]: crystal geometry
# ---------------------------------------------------------------------------------------

# The 24 proper rotations of the cubic point group 432 as quaternions (w, x, y, z), in
# NEML2's order, which fixes the order of the slip systems. Letters: h = 1/2, H = -1/2,
# a = sqrt(2)/2, A = -sqrt(2)/2.
_CUBIC = (
    "1000 hhhh Hhhh hHhh hhHh HHHh hHHh HHhh HhHh 0010 0001 0100 "
    "0A0a 0a0a a0a0 a0A0 00Aa aa00 aA00 00aa 0Aa0 a00A 0aa0 a00a"
)
_LETTER = {"0": 0.0, "1": 1.0, "h": 0.5, "H": -0.5, "a": math.sqrt(0.5), "A": -math.sqrt(0.5)}


def _rotation(q: torch.Tensor) -> torch.Tensor:
    """The rotation matrices of unit quaternions ``(..., 4)``."""
    w, x, y, z = q.unbind(-1)
    return torch.stack(
        [
            torch.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            torch.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            torch.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


def cubic_symmetry_operators() -> torch.Tensor:
    """The 24 rotations of the cubic group, ``(24, 3, 3)``, in NEML2's order."""
    quats = [[_LETTER[c] for c in word] for word in _CUBIC.split()]
    return _rotation(torch.tensor(quats, dtype=torch.float64))


def _reciprocal(lattice: torch.Tensor) -> torch.Tensor:
    """The reciprocal lattice (rows) of a lattice given by its rows."""
    a = lattice
    cross = torch.stack([torch.linalg.cross(a[(i + 1) % 3], a[(i + 2) % 3]) for i in range(3)])
    return cross / (a * cross).sum(-1, keepdim=True)


def _reduced(index: torch.Tensor) -> torch.Tensor:
    """A Miller index divided by the greatest common divisor of its components."""
    ints = [round(float(v)) for v in index]
    divisor = math.gcd(*ints) or 1
    return torch.tensor([v / divisor for v in ints], dtype=torch.float64)


def _images(ops: torch.Tensor, vector: torch.Tensor) -> list[torch.Tensor]:
    """The distinct images of ``vector`` under ``ops``, a vector and its negative being one,
    in the order of the operators."""
    kept: list[torch.Tensor] = []
    for image in ops @ vector:
        if not any(torch.allclose(image, k) or torch.allclose(image, -k) for k in kept):
            kept.append(image)
    return kept


@dataclass(frozen=True)
class CrystalGeometry:
    """The slip systems of a crystal: per system (the leading axis, ``nslip``) the unit
    slip direction and plane normal, the Burgers vector length and the Schmid tensors.

    Slip system ``i`` belongs to group ``g`` when ``slip_offsets[g] <= i <
    slip_offsets[g + 1]``: one group per (direction, plane) family given.
    """

    #: the symmetry operators, ``(nsym, 3, 3)``
    sym_ops: torch.Tensor
    #: the lattice vectors as rows, ``(3, 3)``
    lattice_vectors: torch.Tensor
    #: the reciprocal lattice vectors as rows, ``(3, 3)``
    reciprocal_lattice_vectors: torch.Tensor
    #: the Miller indices of the families, ``(nfamily, 3)``
    slip_directions: torch.Tensor
    slip_planes: torch.Tensor
    #: unit slip directions and plane normals, ``(nslip, 3)``
    cartesian_slip_directions: torch.Tensor
    cartesian_slip_planes: torch.Tensor
    #: Burgers vector lengths, ``(nslip,)``
    burgers: torch.Tensor
    #: ``[0, end of group 0, ..., nslip]``
    slip_offsets: tuple[int, ...]

    @classmethod
    def build(
        cls,
        sym_ops: torch.Tensor,
        lattice_vectors: torch.Tensor,
        slip_directions: torch.Tensor,
        slip_planes: torch.Tensor,
    ) -> CrystalGeometry:
        """The slip systems generated by the symmetry operators from each family: every
        distinct image of the direction with every distinct image of the plane normal that
        is perpendicular to it. ValueError when the families give no slip system."""
        directions = slip_directions.reshape(-1, 3)
        planes = slip_planes.reshape(-1, 3)
        if directions.shape != planes.shape:
            raise ValueError(
                f"{directions.shape[0]} slip directions but {planes.shape[0]} slip planes"
            )
        reciprocal = _reciprocal(lattice_vectors)
        dirs: list[torch.Tensor] = []
        normals: list[torch.Tensor] = []
        offsets = [0]
        for d, p in zip(directions, planes, strict=True):
            d_cart = _reduced(d) @ lattice_vectors
            p_cart = _reduced(p) @ reciprocal
            plane_images = _images(sym_ops, p_cart)
            for di in _images(sym_ops, d_cart):
                for pi in plane_images:
                    if abs(float(di @ pi)) <= 1e-8:
                        dirs.append(di)
                        normals.append(pi)
            offsets.append(len(dirs))
        if not dirs:
            raise ValueError("the slip directions and planes give no slip system")
        d_all, p_all = torch.stack(dirs), torch.stack(normals)
        return cls(
            sym_ops=sym_ops,
            lattice_vectors=lattice_vectors,
            reciprocal_lattice_vectors=reciprocal,
            slip_directions=directions,
            slip_planes=planes,
            cartesian_slip_directions=d_all / torch.linalg.vector_norm(d_all, dim=-1, keepdim=True),
            cartesian_slip_planes=p_all / torch.linalg.vector_norm(p_all, dim=-1, keepdim=True),
            burgers=torch.linalg.vector_norm(d_all, dim=-1),
            slip_offsets=tuple(offsets),
        )

    @property
    def nslip(self) -> int:
        """The number of slip systems."""
        return self.slip_offsets[-1]

    @property
    def nslip_groups(self) -> int:
        """The number of slip-system groups (families)."""
        return len(self.slip_offsets) - 1

    def nslip_in_group(self, group: int) -> int:
        """The number of slip systems of one group."""
        if not 0 <= group < self.nslip_groups:
            raise IndexError(f"slip group {group} out of range [0, {self.nslip_groups})")
        return self.slip_offsets[group + 1] - self.slip_offsets[group]

    @property
    def A(self) -> torch.Tensor:
        """The Schmid tensors ``d x n``, ``(nslip, 3, 3)``."""
        return self.cartesian_slip_directions[:, :, None] * self.cartesian_slip_planes[:, None, :]

    @property
    def M(self) -> torch.Tensor:
        """Their symmetric parts, SR2 ``(nslip, 6)``."""
        return full_to_sr2(self.A)

    @property
    def W(self) -> torch.Tensor:
        """Their skew parts, WR2 ``(nslip, 3)``."""
        return full_to_wr2(self.A)


#: Every [Data] type and the options it takes (beside ``type``).
DATA_TYPES: dict[str, tuple[str, ...]] = {
    "CubicCrystal": ("lattice_parameter", "slip_directions", "slip_planes"),
}


def resolve_data(section: Section, key: str, name: str) -> CrystalGeometry:
    """The object of ``[Data/<name>]`` for option ``key`` of ``section`` (built once per
    file)."""
    cache = _cache(section)
    if name in cache.data:
        return cache.data[name]
    blocks = _blocks(_root(section), "Data")
    block = blocks.child(name) if blocks is not None else None
    if block is None:
        raise _missing_block(section, key, "Data", name)
    type_name = block.string("type")
    if type_name not in DATA_TYPES:
        raise block.error(
            "type",
            f"[{block.full_name}]: unknown [Data] type '{type_name}'; known types: "
            f"{', '.join(DATA_TYPES)}",
        )
    _check_options(block, DATA_TYPES[type_name], type_name)
    cache.data[name] = _cubic_crystal(block)
    return cache.data[name]


def _block_tensor(block: Section, key: str, type_name: str) -> torch.Tensor:
    """Option ``key`` of a [Data] block: numbers in place or a [Tensors] block's name."""
    words = block.strings(key)
    try:
        numbers = [block.finite(key, w) for w in words]  # ValueError: not a number
    except ValueError:
        numbers = None
    if numbers is not None:
        size = math.prod(TYPES[type_name])
        if len(numbers) % size:
            raise block.error(
                key, f"parameter '{key}': {len(numbers)} numbers are not {type_name}s"
            )
        return torch.tensor(numbers, dtype=torch.float64).reshape(-1, *TYPES[type_name])
    if len(words) != 1:
        raise block.error(
            key, f"parameter '{key}': expected numbers or the name of a [Tensors] block"
        )
    return resolve_tensor(block, key, words[0], type_name)


def _cubic_crystal(block: Section) -> CrystalGeometry:
    lattice = _block_tensor(block, "lattice_parameter", "Scalar")
    if lattice.numel() != 1:
        raise block.error("lattice_parameter", "parameter 'lattice_parameter': expected one value")
    directions = _block_tensor(block, "slip_directions", "MillerIndex")
    planes = _block_tensor(block, "slip_planes", "MillerIndex")
    if directions.reshape(-1, 3).shape != planes.reshape(-1, 3).shape:
        raise block.error(
            "slip_planes",
            f"[{block.full_name}]: {directions.reshape(-1, 3).shape[0]} slip directions but "
            f"{planes.reshape(-1, 3).shape[0]} slip planes",
        )
    try:
        return CrystalGeometry.build(
            cubic_symmetry_operators(),
            float(lattice.reshape(())) * torch.eye(3, dtype=torch.float64),
            directions,
            planes,
        )
    except ValueError as err:
        raise block.error(None, f"[{block.full_name}]: {err}") from None
