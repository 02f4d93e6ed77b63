"""Damaged or inconsistent artifacts are refused by the Python loader as by the C++ one
(issue 31, rows 1-4), and neml2-inspect prints an artifact and checks it (--check).

Every case damages a copy of the one compiled fixture (tests/aoti/elastic_promoted) and
runs the CLIs in a child process: before these checks, a damaged package could kill the
process that loads it (SIGILL), which must fail one test, not the run.
"""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

import neml2
from neml2 import validate
from neml2.errors import ArtifactError

from .conftest import run_module
from .test_aoti import PER_POINT

pytestmark = pytest.mark.aoti

#: The C++ loader's advice (doc/errors.md E19-E21), word for word.
MISMATCH = (
    "the graph files and model_meta.json do not match; recompile the model with neml2-compile"
)


def copy_of(compiled: tuple[Path, str], dest: Path) -> Path:
    """A copy of the compiled fixture in ``dest``; its stub's path."""
    shutil.copytree(compiled[0], dest / "art")
    return dest / "art" / "model_aoti.i"


def folder_of(stub: Path) -> Path:
    return stub.parent / "model" / "cpu"


def edit_meta(stub: Path, change: Callable[[dict[str, Any]], None]) -> None:
    path = folder_of(stub) / "model_meta.json"
    meta = json.loads(path.read_text())
    change(meta)
    path.write_text(json.dumps(meta))


def flip_inside_library(package: Path) -> str:
    """Flip 64 bytes in the middle of the shared library inside ``package``; its name."""
    with zipfile.ZipFile(package) as archive:
        (info,) = [i for i in archive.infolist() if i.filename.endswith(".so")]
    data = bytearray(package.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    middle = start + info.file_size // 2
    for k in range(64):
        data[middle + k] ^= 0xFF
    package.write_bytes(bytes(data))
    return info.filename


def neml2_run(stub: Path) -> tuple[int, str, str]:
    result = run_module("neml2.run", stub, "--model", "model", "--batch", "4")
    return result.returncode, result.stdout, result.stderr


def inspect(*args: str | Path) -> tuple[int, str, str]:
    result = run_module("neml2.inspect_cli", *args)
    return result.returncode, result.stdout, result.stderr


def one_line(stderr: str, prog: str) -> str:
    """The single line of ``stderr``, after the ``prog: error:`` prefix."""
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"{prog}: error: "), stderr
    return lines[0].removeprefix(f"{prog}: error: ")


# --- row 1: bytes flipped inside the shared object ------------------------------------


def test_flipped_bytes_refused_before_loading(
    compiled_elastic: tuple[Path, str], tmp_path: Path
) -> None:
    stub = copy_of(compiled_elastic, tmp_path)
    package = folder_of(stub) / "forward.pt2"
    member = flip_inside_library(package)
    code, stdout, stderr = neml2_run(stub)
    assert code == 2, (code, stdout, stderr)
    line = one_line(stderr, "neml2-run")
    assert re.fullmatch(
        rf"model 'model' on cpu: cannot load graph 'forward' from '{re.escape(str(package))}': "
        rf"corrupted package: entry '{re.escape(member)}' fails its CRC-32 check "
        r"\(stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}\): "
        r"recompile the model with neml2-compile",
        line,
    ), line
    assert stdout == ""


# --- row 2: another graph's package in the place of forward's -------------------------


def test_other_graph_copied_over_forward_refused(
    compiled_elastic: tuple[Path, str], tmp_path: Path
) -> None:
    stub = copy_of(compiled_elastic, tmp_path)
    folder = folder_of(stub)
    shutil.copy(folder / "jacobian.pt2", folder / "forward.pt2")
    code, stdout, stderr = neml2_run(stub)
    assert code == 2, (code, stdout, stderr)
    assert one_line(stderr, "neml2-run") == (
        f"model 'model' on cpu: graph 'forward' in '{folder / 'forward.pt2'}' holds the "
        "package of 'jacobian': " + MISMATCH
    )


def test_swapped_graph_caught_by_its_returns_too(
    loadable_elastic: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the package checks, the call on one point at load refuses the swap, with
    the C++ loader's message (doc/errors.md E19)."""
    stub = copy_of(loadable_elastic, tmp_path)
    folder = folder_of(stub)
    shutil.copy(folder / "jacobian.pt2", folder / "forward.pt2")
    monkeypatch.setattr(validate, "check_package", lambda *args, **kwargs: None)
    with pytest.raises(ArtifactError) as info:
        neml2.load_model(stub, "model")
    assert str(info.value) == (
        "model 'model': graph 'forward' return 0 ('stress') is (6, 6) Double on cpu, "
        "model_meta.json declares (1, 6) Double on cpu: " + MISMATCH
    )


# --- row 3: model_meta.json edited: dtype, input shape ----------------------------------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda m: m.update(dtype="float32"),
            "takes argument 0 ('strain') as (B, 6) float64, model_meta.json declares "
            "(B, 6) float32",
        ),
        (
            lambda m: m["inputs"][0].update(shape=[3]),
            "takes argument 0 ('strain') as (B, 6) float64, model_meta.json declares "
            "(B, 3) float64",
        ),
    ],
    ids=["dtype", "input-shape"],
)
def test_edited_meta_refused_at_load(
    compiled_elastic: tuple[Path, str],
    tmp_path: Path,
    change: Callable[[dict[str, Any]], None],
    message: str,
) -> None:
    stub = copy_of(compiled_elastic, tmp_path)
    edit_meta(stub, change)
    code, stdout, stderr = neml2_run(stub)
    assert code == 2, (code, stdout, stderr)
    package = folder_of(stub) / "forward.pt2"
    assert one_line(stderr, "neml2-run") == (
        f"model 'model' on cpu: graph 'forward' in '{package}' {message}: " + MISMATCH
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda m: m.update(dtype="float32"),
            "graph 'forward' return 0 ('stress') is (1, 6) Double on cpu, "
            "model_meta.json declares (1, 6) Float on cpu",
        ),
        (
            lambda m: m["inputs"][0].update(shape=[3]),
            "graph 'jacobian' return 0 ('stress:strain') is (6, 6) Double on cpu, "
            "model_meta.json declares (6, 3) Double on cpu",
        ),
    ],
    ids=["dtype", "input-shape"],
)
def test_edited_meta_caught_by_the_returns_too(
    loadable_elastic: tuple[Path, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    change: Callable[[dict[str, Any]], None],
    message: str,
) -> None:
    """Without the package checks, the call on one point at load refuses the edit, with
    the C++ loader's messages (doc/errors.md E21)."""
    stub = copy_of(loadable_elastic, tmp_path)
    edit_meta(stub, change)
    monkeypatch.setattr(validate, "check_package", lambda *args, **kwargs: None)
    with pytest.raises(ArtifactError) as info:
        neml2.load_model(stub, "model")
    assert str(info.value) == f"model 'model': {message}: " + MISMATCH


# --- row 4: a truncated package, a field of the wrong type ----------------------------


def test_truncated_package_is_one_line(compiled_elastic: tuple[Path, str], tmp_path: Path) -> None:
    stub = copy_of(compiled_elastic, tmp_path)
    package = folder_of(stub) / "jvp.pt2"
    package.write_bytes(package.read_bytes()[:100_000])
    code, stdout, stderr = neml2_run(stub)
    assert code == 2, (code, stdout, stderr)
    assert one_line(stderr, "neml2-run") == (
        f"model 'model' on cpu: cannot load graph 'jvp' from '{package}': corrupted package: "
        "no end-of-central-directory record: the file is truncated or not a zip archive: "
        "recompile the model with neml2-compile"
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda m: m.update(inputs="strain"), "field 'inputs' must be an array, found a string"),
        (
            lambda m: m["outputs"][0].update(shape=["6"]),
            "field 'outputs[0].shape' must be an integer",
        ),
        (
            lambda m: m["parameters"][0].update(value=[1.0, 2.0]),
            "field 'parameters[0].value' has 2 numbers, shape needs 1",
        ),
        (
            lambda m: m["graphs"]["forward"].update(args=[{"role": "input"}]),
            "missing field 'graphs.forward.args[0].name'",
        ),
        (lambda m: m.update(type=7), "field 'type' must be a string, found a number"),
    ],
    ids=["inputs", "shape", "value", "slot", "type"],
)
def test_mistyped_meta_field_is_one_line(
    compiled_elastic: tuple[Path, str],
    tmp_path: Path,
    change: Callable[[dict[str, Any]], None],
    message: str,
) -> None:
    stub = copy_of(compiled_elastic, tmp_path)
    edit_meta(stub, change)
    code, stdout, stderr = neml2_run(stub)
    assert code == 2, (code, stdout, stderr)
    meta = folder_of(stub) / "model_meta.json"
    assert one_line(stderr, "neml2-run") == f"{meta}: {message}"


# --- neml2-inspect --------------------------------------------------------------------


def test_inspect_prints_what_the_folder_holds(compiled_elastic: tuple[Path, str]) -> None:
    stub = compiled_elastic[0] / "model_aoti.i"
    code, stdout, stderr = inspect(stub)
    assert code == 0, stderr
    record = json.loads((folder_of(stub) / ".neml2-fingerprint").read_text())
    lines = stdout.splitlines()
    assert lines[0] == f"model 'model' (LinearIsotropicElasticity) in {stub}"
    assert lines[1] == f"  cpu: {folder_of(stub)}"
    assert "    dtype        float64" in lines
    assert f"    torch        {torch.__version__}" in lines
    assert f"    fingerprint  {record['fingerprint']}" in lines
    assert lines[lines.index("    inputs") + 1].split() == ["strain", "[6]"]
    assert lines[lines.index("    outputs") + 1].split() == ["stress", "[6]"]
    start = lines.index("    parameters") + 1
    assert [line.split() for line in lines[start : start + 2]] == [
        ["model.E", "[]", "=", "100000"],
        ["model.nu", "[]", "=", "0.25"],
    ]
    if PER_POINT:  # the fixture compiles every graph's per-point variant too
        assert "    per point    model.E, model.nu" in lines
        assert lines[-1] == (
            "    graphs       forward (in place: forward_into.pt2; per point: "
            "forward_per_point.pt2, in place: forward_per_point_into.pt2), "
            "jvp (per point: jvp_per_point.pt2), jacobian (per point: jacobian_per_point.pt2), "
            "param_jacobian (per point: param_jacobian_per_point.pt2), "
            "param_vjp (per point: param_vjp_per_point.pt2)"
        )
    else:
        assert lines[-1] == (
            "    graphs       forward (in place: forward_into.pt2), jvp, jacobian, "
            "param_jacobian, param_vjp"
        )
    assert stderr == ""


def test_inspect_check_passes_on_a_good_artifact(compiled_elastic: tuple[Path, str]) -> None:
    code, stdout, stderr = inspect(compiled_elastic[0] / "model_aoti.i", "--check")
    assert code == 0, stderr
    files = 12 if PER_POINT else 6
    assert stdout.splitlines()[-1] == f"check: ok ({files} graph files; no graph was run)"


def damage_flip(stub: Path) -> str:
    flip_inside_library(folder_of(stub) / "param_vjp.pt2")
    return "cannot load graph 'param_vjp' from .*: corrupted package: entry .* fails its CRC-32"


def damage_swap(stub: Path) -> str:
    folder = folder_of(stub)
    shutil.copy(folder / "jacobian.pt2", folder / "forward.pt2")
    return "graph 'forward' in .* holds the package of 'jacobian'"


def damage_dtype(stub: Path) -> str:
    edit_meta(stub, lambda m: m.update(dtype="float32"))
    return r"takes argument 0 \('strain'\) as \(B, 6\) float64"


def damage_shape(stub: Path) -> str:
    edit_meta(stub, lambda m: m["inputs"][0].update(shape=[3]))
    return r"model_meta.json declares \(B, 3\) float64"


def damage_truncate(stub: Path) -> str:
    package = folder_of(stub) / "forward_into.pt2"
    package.write_bytes(package.read_bytes()[:-1000])
    return "cannot load graph 'forward' from .*forward_into.pt2.*: corrupted package"


def damage_field(stub: Path) -> str:
    edit_meta(stub, lambda m: m.update(inputs="strain"))
    return "field 'inputs' must be an array, found a string"


@pytest.mark.parametrize(
    "damage",
    [damage_flip, damage_swap, damage_dtype, damage_shape, damage_truncate, damage_field],
    ids=["flipped-bytes", "swapped-graph", "dtype", "input-shape", "truncated", "mistyped-field"],
)
def test_inspect_check_refuses_damage(
    compiled_elastic: tuple[Path, str], tmp_path: Path, damage: Callable[[Path], str]
) -> None:
    stub = copy_of(compiled_elastic, tmp_path)
    pattern = damage(stub)
    code, stdout, stderr = inspect(stub, "--check")
    assert code == 2, (code, stdout, stderr)
    assert re.search(pattern, one_line(stderr, "neml2-inspect")), stderr
    assert stdout == ""


def test_inspect_without_check_reads_no_package(
    compiled_elastic: tuple[Path, str], tmp_path: Path
) -> None:
    """Printing reads model_meta.json only; a damaged package shows with --check."""
    stub = copy_of(compiled_elastic, tmp_path)
    damage_flip(stub)
    assert inspect(stub)[0] == 0
    assert inspect(stub, "--check")[0] == 2


def test_inspect_options(compiled_elastic: tuple[Path, str], tmp_path: Path) -> None:
    stub = compiled_elastic[0] / "model_aoti.i"
    code, stdout, _ = inspect("--version")
    assert (code, stdout.strip()) == (0, f"neml2-inspect {neml2.__version__}")
    code, _, stderr = inspect(stub, "--che")  # no abbreviations
    assert code == 2
    assert "unrecognized arguments: --che" in stderr
    code, _, stderr = inspect(stub, "--model", "other")
    assert code == 2
    assert stderr.strip() == f"{stub}:1: [Models] has no model 'other'; models defined: model"
    source = tmp_path / "source.i"
    source.write_text("[Models]\n  [model]\n    type = LinearIsotropicElasticity\n  []\n[]\n")
    code, _, stderr = inspect(source)
    assert code == 2
    assert one_line(stderr, "neml2-inspect") == (
        f"{source}: no compiled model (type = AOTIModel) in [Models]"
    )
