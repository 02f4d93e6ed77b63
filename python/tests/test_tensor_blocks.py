"""The [Tensors] and [Data] blocks: values against NEML2 3.1.0 (run in a child process on
the same input files) or by hand, every refusal as a HitError at its line, and caching."""

from __future__ import annotations

import math
import re
import subprocess
from pathlib import Path

import pytest
import torch

from neml2 import hit, tensor_blocks
from neml2.data_blocks import CrystalGeometry, resolve_data
from neml2.errors import HitError
from neml2.models.base import tensor_option
from neml2.tensor_blocks import evaluate_tensor_block, resolve_tensor, resolve_typed
from neml2.tensor_expr import TypedTensor

from .conftest import REPO
from .test_neml2_oracle import oracle_env, oracle_python

FOLDER = REPO / "tests" / "neml2_inputs" / "tensors"
ORACLE_FILES = ("python_forms.i", "csv_forms.i", "crystals.i")


def load(name: str) -> hit.Section:
    return hit.load(FOLDER / name)


def block_names(name: str, top: str = "Tensors") -> list[str]:
    section = load(name).child(top)
    assert section is not None
    return list(section.children)


def model(root: hit.Section) -> hit.Section:
    section = root.child("Models")
    assert section is not None
    found = section.child("model")
    assert found is not None
    return found


def line_of(file: str, block: str, key: str) -> int:
    """The line of ``key = ...`` in ``[block]``, found in the text (not by the reader)."""
    lines = (FOLDER / file).read_text().splitlines()
    start = next(i for i, text in enumerate(lines) if text.strip() == f"[{block}]")
    for i in range(start + 1, len(lines)):
        if re.match(rf"\s*{re.escape(key)}\s*=", lines[i]):
            return i + 1
        if lines[i].strip() == "[]":
            break
    raise AssertionError(f"no {key} in [{block}] of {file}")


def header_of(file: str, block: str) -> int:
    lines = (FOLDER / file).read_text().splitlines()
    return next(i for i, text in enumerate(lines) if text.strip() == f"[{block}]") + 1


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """NEML2's [Tensors] and [Data] values of the oracle files, from one child process."""
    python = oracle_python()
    result = tmp_path_factory.mktemp("tensors-oracle") / "result.pt"
    run = subprocess.run(
        [python, "tensors_oracle.py", str(result), *ORACLE_FILES],
        cwd=FOLDER,  # not beside this project's own package neml2
        env=oracle_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return torch.load(result)  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------
# values against NEML2
# ---------------------------------------------------------------------------------------


def check_against(expected: dict, value: TypedTensor | torch.Tensor) -> None:
    assert "error" not in expected, expected.get("error")
    if isinstance(value, TypedTensor):
        assert expected["type"] == value.TYPE
        assert value.sub_batch_ndim == expected["sub_batch_ndim"]
        data = value.data
    else:
        assert expected["type"] == "Tensor"
        data = value
    assert data.dtype == torch.float64
    assert tuple(data.shape) == tuple(expected["data"].shape)
    torch.testing.assert_close(data, expected["data"], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", block_names("python_forms.i"))
def test_python_forms_match_neml2(oracle: dict, name: str) -> None:
    root = load("python_forms.i")
    check_against(oracle["python_forms.i"]["tensors"][name], evaluate_tensor_block(root, name))


@pytest.mark.parametrize("name", block_names("csv_forms.i"))
def test_csv_forms_match_neml2(oracle: dict, name: str) -> None:
    root = load("csv_forms.i")
    check_against(oracle["csv_forms.i"]["tensors"][name], evaluate_tensor_block(root, name))


GEOMETRY = {
    "sym_ops_data": "sym_ops",
    "lattice_vectors": "lattice_vectors",
    "reciprocal_lattice_vectors": "reciprocal_lattice_vectors",
    "cartesian_slip_directions": "cartesian_slip_directions",
    "cartesian_slip_planes": "cartesian_slip_planes",
    "burgers": "burgers",
    "A_data": "A",
    "M_data": "M",
    "W_data": "W",
}


@pytest.mark.parametrize("name", block_names("crystals.i", "Data"))
def test_crystal_geometry_matches_neml2(oracle: dict, name: str) -> None:
    root = load("crystals.i")
    geometry = resolve_data(root, "crystal_geometry", name)
    expected = oracle["crystals.i"]["data"][name]
    for theirs, ours in GEOMETRY.items():
        torch.testing.assert_close(
            getattr(geometry, ours), expected[theirs].to(torch.float64), rtol=1e-12, atol=1e-12
        )
    assert list(geometry.slip_offsets) == expected["slip_offsets"]


def test_slip_system_counts_by_hand() -> None:
    root = load("crystals.i")
    fcc, bcc, bcc2 = (resolve_data(root, "g", n) for n in ("fcc", "bcc", "bcc2"))
    assert (fcc.nslip, bcc.nslip, bcc2.nslip) == (12, 12, 24)
    assert (bcc2.nslip_groups, bcc2.nslip_in_group(1)) == (2, 12)
    # FCC: every direction lies in its plane; Burgers vector a <110> has length a sqrt(2)
    dots = (fcc.cartesian_slip_directions * fcc.cartesian_slip_planes).sum(-1)
    torch.testing.assert_close(dots, torch.zeros(12, dtype=torch.float64))
    torch.testing.assert_close(fcc.burgers, torch.full((12,), math.sqrt(2.0), dtype=torch.float64))
    # BCC with a = 1.2 (a [Tensors] Scalar): <111> has length a sqrt(3)
    torch.testing.assert_close(bcc.burgers, torch.full((12,), 1.2 * math.sqrt(3.0)).double())
    # a reducible Miller index (220) is the family (110)
    scaled = resolve_data(root, "g", "fcc_scaled")
    torch.testing.assert_close(scaled.cartesian_slip_directions, fcc.cartesian_slip_directions)
    torch.testing.assert_close(scaled.burgers, 3.5 * fcc.burgers)
    with pytest.raises(IndexError):
        fcc.nslip_in_group(1)


# ---------------------------------------------------------------------------------------
# options that name tensors
# ---------------------------------------------------------------------------------------


def test_extensions_by_hand() -> None:
    root = load("extensions.i")
    loop = evaluate_tensor_block(root, "loop")
    assert isinstance(loop, TypedTensor)
    assert loop.TYPE == "Scalar"
    torch.testing.assert_close(loop.data, torch.arange(4.0, dtype=torch.float64))


def test_options_name_tensors() -> None:
    section = model(load("extensions.i"))
    table = tensor_option(section, "E", "Scalar")
    torch.testing.assert_close(table, torch.linspace(0, 1, 5, dtype=torch.float64))
    # a plain number / plain tensor is accepted when its trailing dims fit
    assert float(tensor_option(section, "nu", "Scalar")) == 2.5
    eps = tensor_option(section, "eps", "SR2")
    assert eps.shape == (4, 6)
    assert eps.dtype == torch.float64
    torch.testing.assert_close(tensor_option(section, "C", "SSR4"), 3.0 * torch.eye(6).double())
    # NEML2's older name of MRP
    torch.testing.assert_close(
        resolve_tensor(section, "r", "rot", "Rot"), torch.tensor([0.1, 0, 0]).double()
    )
    assert resolve_typed(section, "E", "table", "Scalar").sub_batch_ndim == 0
    # numbers in place still go the old way
    assert tensor_option(section, "inline", "SR2").shape == (6,)


@pytest.mark.parametrize(
    ("key", "type_name", "message"),
    [
        (
            "wrong",
            "Scalar",
            "parameter 'wrong' takes type Scalar, but [Tensors/strain] is of type SR2",
        ),
        (
            "wrong_plain",
            "Vec",
            "takes type Vec (base shape (3,)), but [Tensors/raw_sr2] is a plain",
        ),
        ("missing", "Scalar", "no [Tensors] block named 'nothing_here'; [Tensors] blocks: loop, "),
    ],
)
def test_option_refusals(key: str, type_name: str, message: str) -> None:
    section = model(load("extensions.i"))
    with pytest.raises(HitError) as info:
        tensor_option(section, key, type_name)
    assert info.value.path == str(FOLDER / "extensions.i")
    assert info.value.line == line_of("extensions.i", "model", key)
    assert message in info.value.message


def test_resolved_tensor_is_a_copy() -> None:
    section = model(load("extensions.i"))
    first = resolve_tensor(section, "C", "stiffness", "SSR4")
    first.zero_()
    torch.testing.assert_close(
        resolve_tensor(section, "C", "stiffness", "SSR4").trace().item(), 18.0
    )


# ---------------------------------------------------------------------------------------
# refusals
# ---------------------------------------------------------------------------------------

OUTSIDE = "expression reaches outside the tensor namespace"

#: block -> (line offset from its expr line, or a key whose line it is; message part)
REFUSALS: dict[str, tuple[int | str, str]] = {
    "dunder_class": (0, f"{OUTSIDE}: attribute '__class__'"),
    "dunder_chain": (0, f"{OUTSIDE}: attribute '__"),
    "dunder_globals": (0, f"{OUTSIDE}: attribute '__globals__'"),
    "import_os": (1, f"{OUTSIDE}: an import"),
    "from_import": (2, f"{OUTSIDE}: an import"),
    "dunder_import": (0, f"{OUTSIDE}: '__import__'"),
    "open_file": (0, f"{OUTSIDE}: 'open'"),
    "eval_call": (0, f"{OUTSIDE}: 'eval'"),
    "exec_call": (0, f"{OUTSIDE}: 'exec'"),
    "getattr_call": (0, f"{OUTSIDE}: 'getattr'"),
    "lambda_expr": (0, f"{OUTSIDE}: a lambda"),
    "builtins_name": (0, f"{OUTSIDE}: '__builtins__'"),
    "torch_load": (0, f"{OUTSIDE}: attribute 'load'"),
    "torch_save": (0, f"{OUTSIDE}: attribute 'save'"),
    "torch_ops": (0, f"{OUTSIDE}: attribute 'ops'"),
    "tensor_numpy": (0, f"{OUTSIDE}: attribute 'numpy'"),
    "generator_frame": (0, f"{OUTSIDE}: attribute 'gi_frame'"),
    "set_attribute": (2, f"{OUTSIDE}: assignment to attribute 'data'"),
    "function_def": (1, f"{OUTSIDE}: a function definition"),
    "unknown_name": (0, "unknown name 'youngs_modulus'; known names: "),
    "syntax_error": (0, "invalid Python"),
    "no_result": (0, "must assign its value to 'result'"),
    "runtime_error": (2, "ValueError: SR2.fill takes 1, 3 or 6 components, got 2"),
    "not_a_tensor": (0, "the expression gave a str, not a tensor"),
    "cycle_a": ("cycle_b", "cycle: cycle_a -> cycle_b -> cycle_a"),
    "cycle_b": ("cycle_a", "cycle: cycle_b -> cycle_a -> cycle_b"),
    "self_ref": (0, "cycle: self_ref -> self_ref"),
    "unknown_type": ("type", "unknown [Tensors] type 'Pythn'; known types: Python, CSVScalar"),
    "unknown_option": ("exprr", "Python has no option 'exprr'"),
    "csv_missing_file": ("csv_file", "CSV file 'no_such.csv' not found"),
    "csv_missing_column": ("variable", "columns strain_xx, strain_yy"),
    "csv_both": ("column_names", "either 'variable' or 'column_names', not both"),
    "csv_neither": ("header", "CSVScalar needs 'variable' or 'column_names'"),
    "csv_count": ("column_names", "a CSVVec takes 3 columns, got 2"),
    "csv_not_number": ("csv_file", "row 3: 'oops' is not a number"),
}


def expected_line(block: str, where: int | str) -> int:
    if isinstance(where, int):
        return line_of("refusals.i", block, "expr") + where
    if where == "header":
        return header_of("refusals.i", block)
    if where in ("cycle_a", "cycle_b"):  # reported in the block that closes the cycle
        return line_of("refusals.i", where, "expr")
    return line_of("refusals.i", block, where)


def test_every_refusal_block_is_listed() -> None:
    assert set(block_names("refusals.i")) == set(REFUSALS)


@pytest.mark.parametrize("block", list(REFUSALS))
def test_refusals(block: str) -> None:
    where, message = REFUSALS[block]
    with pytest.raises(HitError) as info:
        evaluate_tensor_block(load("refusals.i"), block)
    assert info.value.path == str(FOLDER / "refusals.i")
    assert info.value.line == expected_line(block, where), info.value
    assert message in info.value.message, info.value.message
    assert info.value.message.startswith("[Tensors/") or "cycle" in message


def test_unknown_name_lists_known_names() -> None:
    with pytest.raises(HitError) as info:
        evaluate_tensor_block(load("refusals.i"), "unknown_name")
    known = info.value.message.split("known names: ")[1].split(", ")
    for name in ("SR2", "Scalar", "linspace", "torch", "math", "range", "dunder_class"):
        assert name in known


def test_namespace_has_no_torch_escape_hatches() -> None:
    from neml2.tensor_expr import TORCH, base_namespace

    for name in ("load", "save", "ops", "hub", "utils", "jit", "classes", "from_file"):
        with pytest.raises(AttributeError):
            getattr(TORCH, name)
    names = base_namespace()
    assert "__builtins__" not in names
    assert "open" not in names


# ---------------------------------------------------------------------------------------
# [Data] refusals
# ---------------------------------------------------------------------------------------

#: option of [Models/model] -> (where: "option", "block:<key>" or "header"; message part;
#: the [Data] block)
DATA_REFUSALS: dict[str, tuple[str, str, str]] = {
    "other": (
        "block:type",
        "unknown [Data] type 'HexagonalCrystal'; known types: CubicCrystal",
        "hexagonal",
    ),
    "missing": ("option", "no [Data] block named 'no_such_data'; [Data] blocks: good, ", ""),
    "mismatch": ("block:slip_planes", "1 slip directions but 2 slip planes", "mismatch"),
    "wrong_type": (
        "block:slip_planes",
        "takes type MillerIndex, but [Tensors/vec] is of type Vec",
        "wrong_type",
    ),
    "no_systems": ("header", "give no slip system", "no_systems"),
    "extra_option": (
        "block:crystal_class",
        "CubicCrystal has no option 'crystal_class'",
        "extra_option",
    ),
}


@pytest.mark.parametrize("key", list(DATA_REFUSALS))
def test_data_refusals(key: str) -> None:
    where, message, block = DATA_REFUSALS[key]
    section = model(load("data_errors.i"))
    with pytest.raises(HitError) as info:
        resolve_data(section, key, section.string(key))
    if where == "option":
        line = line_of("data_errors.i", "model", key)
    elif where == "header":
        line = header_of("data_errors.i", block)
    else:
        line = line_of("data_errors.i", block, where.split(":")[1])
    assert info.value.path == str(FOLDER / "data_errors.i")
    assert info.value.line == line
    assert message in info.value.message, info.value.message


# ---------------------------------------------------------------------------------------
# caching
# ---------------------------------------------------------------------------------------


def test_a_block_is_evaluated_once_per_file(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    evaluate = tensor_blocks._evaluate_block

    def counting(block: hit.Section) -> object:
        calls.append(block.name)
        return evaluate(block)

    monkeypatch.setattr(tensor_blocks, "_evaluate_block", counting)
    root = load("python_forms.i")
    section = root.child("Tensors")
    assert section is not None
    for _ in range(3):
        resolve_tensor(section, "x", "sr2_fill6", "SR2")
    evaluate_tensor_block(root, "ssr4_apply")  # refers to sr2_fill6 as well
    evaluate_tensor_block(root, "functions")  # and again
    assert calls.count("sr2_fill6") == 1
    assert calls.count("ssr4_apply") == 1
    # another parse of the same file is another file: evaluated anew
    evaluate_tensor_block(load("python_forms.i"), "sr2_fill6")
    assert calls.count("sr2_fill6") == 2


def test_data_is_built_once_per_file() -> None:
    root = load("crystals.i")
    first = resolve_data(root, "g", "fcc")
    assert isinstance(first, CrystalGeometry)
    assert resolve_data(root, "g", "fcc") is first
    assert resolve_data(load("crystals.i"), "g", "fcc") is not first


def test_csv_file_is_read_once_per_file(monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[Path] = []
    original = Path.open

    def counting(self: Path, *args: object, **kwargs: object) -> object:
        if self.suffix == ".csv":
            reads.append(self)
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "open", counting)
    root = load("csv_forms.i")
    for name in block_names("csv_forms.i"):
        evaluate_tensor_block(root, name)
    assert len(reads) == 1


def test_torch_creation_functions_run_inside_the_restricted_namespace(tmp_path: Path) -> None:
    """torch's C functions import modules of their own through the calling frame's
    builtins; the restricted builtins must let them (and only them) do so."""
    path = tmp_path / "creation.i"
    path.write_text(
        "[Tensors]\n"
        "  [a]\n    type = Python\n    expr = 'torch.linspace(0.0, 0.04, 5)'\n  []\n"
        "  [b]\n    type = Python\n    expr = 'Scalar(torch.tensor([1.0, 1.5]))'\n  []\n"
        "[]\n"
    )
    root = hit.load(path)
    a = evaluate_tensor_block(root, "a")
    assert isinstance(a, torch.Tensor)
    torch.testing.assert_close(a, torch.linspace(0.0, 0.04, 5, dtype=torch.float64))
    b = evaluate_tensor_block(root, "b")
    torch.testing.assert_close(getattr(b, "data", b), torch.tensor([1.0, 1.5], dtype=torch.float64))
