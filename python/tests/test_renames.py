"""neml2-compile --rename-input/--rename-output/--rename-parameter: the checks of OLD:NEW,
the names model_meta.json takes, and a rename alone rewriting the meta without a compile.

The compile step is replaced (test_compile_cli.fake_compile), so these run in seconds; the
compiled thermo-elastic fixture, whose flags.txt renames, is loaded in test_aoti_models.py
and tests/aoti/test_models.cpp.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from neml2 import renames, validate
from neml2.errors import ArtifactError

from .conftest import FIXTURES
from .test_compile_cli import ELASTIC, Compiled, compile_here, fake_compile  # noqa: F401

THERMOELASTIC = FIXTURES / "thermoelastic" / "model.i"


def meta_of(out: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((out / "model" / "cpu" / "model_meta.json").read_text())
    return result


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--rename-input", "strain"], "--rename-input strain: expected OLD:NEW"),
        (["--rename-input", "strain:a:b"], "--rename-input strain:a:b: expected OLD:NEW"),
        (["--rename-output", ":sigma"], "--rename-output :sigma: expected OLD:NEW"),
        (
            ["--rename-input", "strian:eps"],
            "--rename-input strian:eps: model 'model' has no input 'strian'; "
            "inputs: temperature, strain",
        ),
        (
            ["-p", ":", "--rename-parameter", "E:youngs"],
            "--rename-parameter E:youngs: model 'model' has no promoted parameter 'E'; "
            "promoted parameters: thermal.alpha, thermal.T0, elastic.E, elastic.nu",
        ),
        (
            ["-p", "elastic.nu", "--rename-parameter", "elastic.E:E"],
            "--rename-parameter elastic.E:E: model 'model' has no promoted parameter "
            "'elastic.E'; promoted parameters: elastic.nu (baked into the graphs: "
            "thermal.alpha, thermal.T0, elastic.E; promote one with -p to rename it)",
        ),
        (
            ["--rename-input", "strain:a", "strain:b"],
            "--rename-input strain:b: 'strain' is renamed twice (to 'a' and 'b')",
        ),
        (
            ["--rename-input", "strain:2eps"],
            "--rename-input strain:2eps: '2eps' is not a valid name (a letter or '_', then "
            "letters, digits, '_', '.' or '/')",
        ),
        (
            ["--rename-input", "strain:a b"],
            "--rename-input strain:a b: 'a b' is not a valid name",
        ),
        (
            ["--rename-input", "strain:temperature"],
            "--rename-input strain:temperature: 'temperature' is already the name of input "
            "'temperature'",
        ),
        (
            ["--rename-output", "stress:strain"],
            "--rename-output stress:strain: 'strain' is already the name of input 'strain'",
        ),
        (
            ["--rename-input", "strain:x", "--rename-output", "stress:x"],
            "--rename-input strain:x: 'x' is also the new name of output 'stress'",
        ),
        (
            ["-p", ":", "--rename-parameter", "elastic.E:sigma", "--rename-output", "stress:sigma"],
            "--rename-output stress:sigma: 'sigma' is also the new name of parameter 'elastic.E'",
        ),
    ],
)
def test_a_bad_rename_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, options: list[str], message: str
) -> None:
    status, out, err = compile_here(capsys, THERMOELASTIC, tmp_path / "out", *options)
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1, err
    assert err.startswith(f"neml2-compile: error: {message}")
    assert not (tmp_path / "out").exists()  # refused before any work


def test_renames_name_the_boundary_and_keep_the_old_names(
    fake_compile: Compiled,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    plain, named = tmp_path / "plain", tmp_path / "named"
    flags = ["-d", ":", "-p", ":", "--into", "forward"]
    assert compile_here(capsys, THERMOELASTIC, plain, *flags)[0] == 0
    status, _, _ = compile_here(
        capsys,
        THERMOELASTIC,
        named,
        *flags,
        # a swap, a name with '/' and '.', and a name that keeps its name
        "--rename-input",
        "strain:temperature",
        "temperature:strain",
        "--rename-output",
        "stress:forces/S",
        "--rename-parameter",
        "elastic.nu:elastic.nu",
        "thermal.alpha:thermal.expansion",
        "elastic.E:E",
    )
    assert status == 0
    before, after = meta_of(plain), meta_of(named)
    assert "renamed_from" not in json.dumps(before)
    assert after["inputs"] == [
        {"name": "strain", "renamed_from": "temperature", "shape": []},
        {"name": "temperature", "renamed_from": "strain", "shape": [6]},
    ]
    assert after["outputs"] == [{"name": "forces/S", "renamed_from": "stress", "shape": [6]}]
    assert [(p["name"], p.get("renamed_from")) for p in after["parameters"]] == [
        ("thermal.expansion", "thermal.alpha"),
        ("thermal.T0", None),
        ("E", "elastic.E"),
        ("elastic.nu", None),
    ]
    assert {(d["of"], d["wrt"]) for d in after["derivatives"]} == {
        ("forces/S", "strain"),
        ("forces/S", "temperature"),
    }
    assert [d["wrt"] for d in after["param_derivatives"]] == [
        "thermal.expansion",
        "thermal.T0",
        "E",
        "elastic.nu",
    ]
    # Only the names differ: renaming back gives the meta compiled without renames.
    assert strip(renames.apply(after, reverse(after))) == before
    assert after["graphs"]["forward"]["into"] == "forward_into.pt2"
    jvp = after["graphs"]["jvp"]
    assert [(s["role"], s["name"]) for s in jvp["args"] if s["role"] == "tangent"] == [
        ("tangent", "strain"),
        ("tangent", "temperature"),
    ]
    assert jvp["returns"] == [{"role": "tangent", "name": "forces/S"}]
    # The graphs are the same: renames do not reach them.
    for graph in ("forward", "forward_into", "jacobian", "param_vjp"):
        a = (plain / "model" / "cpu" / f"{graph}.pt2").read_bytes()
        assert a == (named / "model" / "cpu" / f"{graph}.pt2").read_bytes()


def reverse(meta: dict[str, Any]) -> dict[str, dict[str, str]]:
    """The renames that undo ``meta``'s."""
    return {
        key: {v["name"]: v["renamed_from"] for v in meta[key] if "renamed_from" in v}
        for key in ("inputs", "outputs", "parameters")
    }


def strip(meta: dict[str, Any]) -> dict[str, Any]:
    """``meta`` without the ``renamed_from`` of its variables."""
    out = dict(meta)
    for key in ("inputs", "outputs", "parameters"):
        out[key] = [{k: x for k, x in v.items() if k != "renamed_from"} for v in meta[key]]
    return out


def test_a_rename_alone_rewrites_the_meta_without_compiling(
    fake_compile: Compiled,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    folder = tmp_path / "model" / "cpu"
    flags = ["-d", ":", "-p", "E", "--into", "forward"]
    assert compile_here(capsys, ELASTIC, tmp_path, *flags)[0] == 0
    compiled = len(fake_compile)
    plain = meta_of(tmp_path)
    graphs = {p.name: p.read_bytes() for p in folder.glob("*.pt2")}
    assert len(graphs) == 6  # forward, its in-place variant, jvp, jacobian and two param graphs

    rename = ["--rename-input", "strain:eps", "--rename-parameter", "E:youngs"]
    status, out, _ = compile_here(capsys, ELASTIC, tmp_path, *flags, *rename)
    assert status == 0
    assert len(fake_compile) == compiled  # nothing compiled
    lines = out.splitlines()
    assert lines[0] == (
        f"{folder}: only the names changed (--rename-*): model_meta.json rewritten, "
        "no graph compiled"
    )
    assert re.fullmatch(r"done in \d+\.\d s: 0 graphs compiled, 1 device folder renamed", lines[-1])
    assert {p.name: p.read_bytes() for p in folder.glob("*.pt2")} == graphs
    meta = meta_of(tmp_path)
    assert meta["inputs"][0] == {"name": "eps", "renamed_from": "strain", "shape": [6]}
    assert meta["parameters"][0]["name"] == "youngs"
    assert meta["graphs"]["jacobian"]["returns"] == [
        {"role": "derivative", "of": "stress", "wrt": "eps"}
    ]
    assert not list(folder.parent.glob(".cpu.*"))  # no build folder left behind

    # The same renames again: up to date.
    status, out, _ = compile_here(capsys, ELASTIC, tmp_path, *flags, *rename)
    assert (status, out.splitlines()[0]) == (0, f"{folder}: up to date, skipped")
    # No renames: the meta is again exactly the one compiled without them.
    status, out, _ = compile_here(capsys, ELASTIC, tmp_path, *flags)
    assert status == 0
    assert "only the names changed" in out.splitlines()[0]
    assert meta_of(tmp_path) == plain
    assert len(fake_compile) == compiled
    # A rename with another change (here a parameter value) compiles as before.
    source = tmp_path / "model.i"
    source.write_text(ELASTIC.read_text().replace("'100 0.3'", "'120 0.3'"))
    status, out, _ = compile_here(capsys, source, tmp_path, *flags, *rename)
    assert status == 0
    first = out.splitlines()[0]
    assert "6 graphs to compile" in first
    assert "parameter values" in first
    assert "names (--rename-*)" in first
    assert len(fake_compile) == 2 * compiled
    assert meta_of(tmp_path)["inputs"][0]["name"] == "eps"


def test_a_damaged_graph_is_compiled_again_not_renamed(
    fake_compile: Compiled,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    assert compile_here(capsys, ELASTIC, tmp_path)[0] == 0
    forward = tmp_path / "model" / "cpu" / "forward.pt2"
    forward.write_bytes(forward.read_bytes()[::-1])
    status, out, _ = compile_here(capsys, ELASTIC, tmp_path, "--rename-output", "stress:sigma")
    assert status == 0
    assert "1 graph to compile (forward); changed: names (--rename-*)" in out.splitlines()[0]
    assert len(fake_compile) == 2


def test_apply_renames_each_slot_by_role() -> None:
    meta: dict[str, Any] = {
        "inputs": [{"name": "x", "shape": [3, 6], "sub_batch": [3]}, {"name": "t", "shape": []}],
        "outputs": [{"name": "x_new", "shape": [3, 6], "sub_batch": [3]}],
        "parameters": [{"name": "m.x", "shape": [], "value": [1.0]}],
        "derivatives": [{"of": "x_new", "wrt": "x", "batched": True}],
        "param_derivatives": [{"of": "x_new", "wrt": "m.x", "batched": True}],
        "status": {"converged": "converged", "residual": "residual"},
        "graphs": {
            "jvp": {
                "file": "jvp.pt2",
                "args": [
                    {"role": "input", "name": "x"},
                    {"role": "parameter", "name": "m.x"},
                    {"role": "tangent", "name": "x"},
                ],
                "returns": [
                    {"role": "tangent", "name": "x_new"},
                    {"role": "converged", "name": "converged"},
                ],
            },
            "param_jacobian": {
                "file": "param_jacobian.pt2",
                "args": [],
                "returns": [{"role": "derivative", "of": "x_new", "wrt": "m.x"}],
            },
            "param_vjp": {
                "file": "param_vjp.pt2",
                "into": "param_vjp_into.pt2",
                "args": [{"role": "cotangent", "name": "x_new"}],
                "returns": [{"role": "adjoint", "name": "m.x"}],
            },
        },
    }
    original = copy.deepcopy(meta)
    # x and x_new swap across the boundary's inputs and outputs; m.x becomes x.
    maps = {"inputs": {"x": "a"}, "outputs": {"x_new": "x"}, "parameters": {"m.x": "p"}}
    out = renames.apply(meta, maps)
    assert meta == original  # not changed in place
    assert out["inputs"][0] == {"name": "a", "renamed_from": "x", "shape": [3, 6], "sub_batch": [3]}
    assert out["inputs"][1] == {"name": "t", "shape": []}
    assert out["outputs"][0]["sub_batch"] == [3]
    assert out["derivatives"] == [{"of": "x", "wrt": "a", "batched": True}]
    assert out["param_derivatives"] == [{"of": "x", "wrt": "p", "batched": True}]
    assert out["status"] == original["status"]
    jvp = out["graphs"]["jvp"]
    assert [s["name"] for s in jvp["args"]] == ["a", "p", "a"]
    assert jvp["returns"] == [
        {"role": "tangent", "name": "x"},
        {"role": "converged", "name": "converged"},
    ]
    assert out["graphs"]["param_jacobian"]["returns"][0] == {
        "role": "derivative",
        "of": "x",
        "wrt": "p",
    }
    assert out["graphs"]["param_vjp"]["args"] == [{"role": "cotangent", "name": "x"}]
    assert out["graphs"]["param_vjp"]["returns"] == [{"role": "adjoint", "name": "p"}]
    assert out["graphs"]["param_vjp"]["into"] == "param_vjp_into.pt2"
    assert renames.apply(meta, {}) is meta


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda m: m["inputs"][0].update(renamed_from=""),
            "field 'inputs[0].renamed_from' is empty",
        ),
        (
            lambda m: m["inputs"][0].update(renamed_from=7),
            "field 'inputs[0].renamed_from' must be a string, found a number",
        ),
        (
            lambda m: m["parameters"][1].update(renamed_from="model.E"),
            "duplicate original name 'model.E' in 'parameters'",
        ),
    ],
)
def test_the_loader_checks_renamed_from(
    fake_compile: Compiled,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    edit: Any,
    message: str,
) -> None:
    rename = ["--rename-input", "strain:eps", "--rename-parameter", "E:youngs"]
    assert compile_here(capsys, ELASTIC, tmp_path, "-p", ":", *rename)[0] == 0
    path = tmp_path / "model" / "cpu" / "model_meta.json"
    meta = meta_of(tmp_path)
    validate.check_meta(path, meta)  # as written: accepted
    edit(meta)
    with pytest.raises(ArtifactError) as info:
        validate.check_meta(path, meta)
    assert str(info.value) == f"{path}: {message}"
