"""End to end: compile tests/aoti/elastic_promoted (cpu, with its flags.txt: -d : -p :,
--into forward, and --per-point : where it has it), check the artifact against
doc/artifacts.md, and run it through neml2.load_model against the eager model."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import torch

import neml2
from neml2.errors import InputError, Neml2Error

from .conftest import FIXTURES, fixture_flags, run_module

pytestmark = pytest.mark.aoti

F64 = torch.float64
GRAPHS = ["forward", "jvp", "jacobian", "param_jacobian", "param_vjp"]
#: Whether the fixture's flags give every promoted parameter per point (--per-point :).
PER_POINT = "--per-point" in fixture_flags("elastic_promoted")
#: What the fixture compiles: every graph, then forward's in-place variant (--into forward),
#: then, with --per-point, every graph's per-point variant and forward's in place.
JOBS = [*GRAPHS, "forward_into"]
if PER_POINT:
    JOBS += [*(f"{g}_per_point" for g in GRAPHS), "forward_per_point_into"]
SOURCE = FIXTURES / "elastic_promoted" / "model.i"
STUB = """\
[Models]
  [model]
    type = AOTIModel
    artifact_path = 'model'
  []
[]
"""


def test_layout_and_progress_lines(compiled_elastic: tuple[Path, str]) -> None:
    out, stdout = compiled_elastic
    assert (out / "model_aoti.i").read_text() == STUB
    assert sorted(p.name for p in out.iterdir()) == ["model", "model_aoti.i"]
    assert [p.name for p in (out / "model").iterdir()] == ["cpu"]
    files = sorted(p.name for p in (out / "model" / "cpu").iterdir())
    assert files == sorted([*(f"{g}.pt2" for g in JOBS), "model_meta.json", ".neml2-fingerprint"])
    lines = stdout.splitlines()
    assert len(lines) == 2 * len(JOBS) + 4
    count = len(JOBS)
    assert lines[0].endswith(
        f"/model/cpu: {count} graphs to compile ({', '.join(JOBS)}); not compiled before"
    )
    for index, graph in enumerate(JOBS):
        assert lines[1 + 2 * index] == f"[{index + 1}/{count}] compiling {graph} for cpu ..."
        line = lines[2 + 2 * index]
        assert re.fullmatch(rf".*/model/cpu/{graph}\.pt2: compiled in \d+\.\d s", line), line
    assert re.fullmatch(r".*/model/cpu: done in \d+\.\d s", lines[-3])
    assert lines[-2] == f"{out / 'model_aoti.i'}: written"
    assert re.fullmatch(rf"done in \d+\.\d s: {count} graphs compiled", lines[-1])


def test_meta(compiled_elastic: tuple[Path, str]) -> None:
    out, _ = compiled_elastic
    meta = json.loads((out / "model" / "cpu" / "model_meta.json").read_text())
    base_args = [
        {"role": "input", "name": "strain"},
        {"role": "parameter", "name": "model.E"},
        {"role": "parameter", "name": "model.nu"},
    ]
    expected: dict[str, Any] = {
        "schema": 1,
        "model": "model",
        "type": "LinearIsotropicElasticity",
        "device": "cpu",
        "dtype": "float64",
        "torch_version": torch.__version__,
        "inputs": [{"name": "strain", "shape": [6]}],
        "outputs": [{"name": "stress", "shape": [6]}],
        "parameters": [
            {"name": "model.E", "shape": [], "value": [100000.0]},
            {"name": "model.nu", "shape": [], "value": [0.25]},
        ],
        "derivatives": [{"of": "stress", "wrt": "strain", "batched": False}],
        "param_derivatives": [
            {"of": "stress", "wrt": "model.E", "batched": True},
            {"of": "stress", "wrt": "model.nu", "batched": True},
        ],
        "status": None,
        "settings": [],
        "graphs": {
            "forward": {
                "file": "forward.pt2",
                "args": base_args,
                "returns": [{"role": "output", "name": "stress"}],
                "into": "forward_into.pt2",
            },
            "jvp": {
                "file": "jvp.pt2",
                "args": [*base_args, {"role": "tangent", "name": "strain"}],
                "returns": [{"role": "tangent", "name": "stress"}],
            },
            "jacobian": {
                "file": "jacobian.pt2",
                "args": base_args,
                "returns": [{"role": "derivative", "of": "stress", "wrt": "strain"}],
            },
            "param_jacobian": {
                "file": "param_jacobian.pt2",
                "args": base_args,
                "returns": [
                    {"role": "derivative", "of": "stress", "wrt": "model.E"},
                    {"role": "derivative", "of": "stress", "wrt": "model.nu"},
                ],
            },
            "param_vjp": {
                "file": "param_vjp.pt2",
                "args": [*base_args, {"role": "cotangent", "name": "stress"}],
                "returns": [
                    {"role": "adjoint", "name": "model.E"},
                    {"role": "adjoint", "name": "model.nu"},
                ],
            },
        },
    }
    if PER_POINT:
        expected["per_point"] = ["model.E", "model.nu"]
        for graph, spec in expected["graphs"].items():
            spec["per_point"] = per_point_variant(graph, spec)
    assert meta == expected


def per_point_variant(graph: str, spec: dict[str, Any]) -> dict[str, Any]:
    """The per-point variant of a graph entry of the fixture (both parameters per point):
    the parameters marked and taking (B,), every block batched, the adjoints per point."""
    marks = {"parameter": {"per_point": True}, "adjoint": {"per_point": True}}
    marks["derivative"] = {"batched": True}
    variant: dict[str, Any] = {
        "file": f"{graph}_per_point.pt2",
        "args": [{**a, **marks.get(a["role"], {})} for a in spec["args"]],
        "returns": [{**r, **marks.get(r["role"], {})} for r in spec["returns"]],
    }
    if "into" in spec:
        variant["into"] = f"{graph}_per_point_into.pt2"
    return variant


@pytest.fixture(scope="module")
def both(loadable_elastic: tuple[Path, str]) -> tuple[Any, Any]:
    out, _ = loadable_elastic
    compiled = neml2.load_model(out / "model_aoti.i", "model")
    eager = neml2.load_model(SOURCE, "model")
    assert isinstance(compiled, neml2.CompiledModel)
    return compiled, eager


@pytest.mark.parametrize("batch", [0, 1, 7])
def test_compiled_graphs_equal_the_eager_model(both: tuple[Any, Any], batch: int) -> None:
    compiled, eager = both
    torch.manual_seed(batch)
    x = {"strain": torch.randn(batch, 6, dtype=F64) * 1e-3}
    v = {"strain": torch.randn(batch, 6, dtype=F64)}
    c = {"stress": torch.randn(batch, 6, dtype=F64)}
    calls = {
        "forward": (x,),
        "jvp": (x, v),
        "jacobian": (x,),
        "param_jacobian": (x,),
        "param_vjp": (x, c),
    }
    for method, args in calls.items():
        got = getattr(compiled, method)(*args)
        want = getattr(eager, method)(*args)
        torch.testing.assert_close(got, want, msg=lambda m, method=method: f"{method}: {m}")
    assert compiled.forward(x)["stress"].shape == (batch, 6)
    assert compiled.jacobian(x)["stress"]["strain"].shape == (6, 6)
    assert compiled.param_jacobian(x)["stress"]["model.E"].shape == (batch, 6)
    assert compiled.param_vjp(x, c)["model.nu"].shape == ()


def test_promoted_parameters_are_live(both: tuple[Any, Any]) -> None:
    compiled, eager = both
    params = compiled.named_parameters()
    assert list(params) == ["model.E", "model.nu"]
    x = {"strain": torch.randn(3, 6, dtype=F64)}
    try:
        for model in (compiled, eager):
            model.named_parameters()["model.E"].fill_(2.0e5)
            model.named_parameters()["model.nu"].fill_(0.3)
        torch.testing.assert_close(compiled.forward(x), eager.forward(x))
        torch.testing.assert_close(compiled.param_jacobian(x), eager.param_jacobian(x))
    finally:
        for model in (compiled, eager):
            model.named_parameters()["model.E"].fill_(1.0e5)
            model.named_parameters()["model.nu"].fill_(0.25)


def test_bad_call_is_a_clear_error(both: tuple[Any, Any]) -> None:
    compiled, _ = both
    with pytest.raises(
        Neml2Error, match=r"input 'strain' has shape \(4, 3\), expected \(6,\) or \(B, 6\)"
    ):
        compiled.forward({"strain": torch.zeros(4, 3, dtype=F64)})
    with pytest.raises(
        Neml2Error, match=re.escape("is torch.float32 on cpu, expected torch.float64 on cpu")
    ):
        compiled.forward({"strain": torch.zeros(4, 6)})


def copy_artifact(out: Path, dest: Path, graphs: bool) -> Path:
    shutil.copy(out / "model_aoti.i", dest / "model_aoti.i")
    folder = dest / "model" / "cpu"
    folder.mkdir(parents=True)
    for item in (out / "model" / "cpu").iterdir():
        if graphs or item.suffix == ".json":
            shutil.copy(item, folder / item.name)
    return folder


def edit_meta(folder: Path, **changes: Any) -> None:
    path = folder / "model_meta.json"
    meta = json.loads(path.read_text())
    meta.update(changes)
    path.write_text(json.dumps(meta))


@pytest.mark.parametrize(
    ("pairs", "hint"),
    [
        (False, "recompile with neml2-compile -d :"),
        (True, "neml2-compile --graphs left it out: add jvp to --graphs"),
    ],
    ids=["without-d", "left-out-by-graphs"],
)
def test_graph_that_was_not_compiled(
    loadable_elastic: tuple[Path, str], tmp_path: Path, pairs: bool, hint: str
) -> None:
    folder = copy_artifact(loadable_elastic[0], tmp_path, graphs=True)
    meta = json.loads((folder / "model_meta.json").read_text())
    del meta["graphs"]["jvp"]
    if not pairs:
        # As compiled without -d: no pairs, so no jacobian or param_jacobian either (a
        # jacobian whose block the meta does not declare is refused at load).
        del meta["graphs"]["jacobian"], meta["graphs"]["param_jacobian"]
        edit_meta(folder, derivatives=[], param_derivatives=[])
    edit_meta(folder, graphs=meta["graphs"])
    model = neml2.load_model(tmp_path / "model_aoti.i", "model")
    x = {"strain": torch.zeros(2, 6, dtype=F64)}
    with pytest.raises(Neml2Error) as info:
        model.jvp(x, x)
    assert str(info.value) == f"model 'model': jvp was not compiled; {hint}"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"schema": 2}, "schema 2 is not supported (expected 1)"),
        ({"device": "cuda"}, "compiled for device 'cuda', expected 'cpu'"),
        ({"torch_version": "1.13.1"}, "compiled with torch 1.13.1, which this torch"),
    ],
)
def test_meta_is_checked(
    compiled_elastic: tuple[Path, str], tmp_path: Path, changes: dict[str, Any], message: str
) -> None:
    folder = copy_artifact(compiled_elastic[0], tmp_path, graphs=False)
    edit_meta(folder, **changes)
    with pytest.raises(Neml2Error) as info:
        neml2.load_model(tmp_path / "model_aoti.i", "model")
    assert message in str(info.value)


def test_an_artifact_without_settings_has_none(
    loadable_elastic: tuple[Path, str], tmp_path: Path
) -> None:
    """An artifact compiled before run-time solver settings (no 'settings' key) loads and
    runs with none."""
    folder = copy_artifact(loadable_elastic[0], tmp_path, graphs=True)
    meta = json.loads((folder / "model_meta.json").read_text())
    del meta["settings"]
    (folder / "model_meta.json").write_text(json.dumps(meta))
    model = neml2.load_model(tmp_path / "model_aoti.i", "model")
    assert model.solver_settings == {}
    out = model.forward({"strain": torch.zeros(2, 6, dtype=F64)})
    assert torch.equal(out["stress"], torch.zeros(2, 6, dtype=F64))
    with pytest.raises(Neml2Error) as info:
        model.set_solver_settings("default", max_its=5)
    assert str(info.value) == (
        "model 'model': unknown solver 'default' (expected solvers: none, the model solves "
        "no equation)"
    )


def test_missing_device_folder(compiled_elastic: tuple[Path, str], tmp_path: Path) -> None:
    shutil.copy(compiled_elastic[0] / "model_aoti.i", tmp_path / "model_aoti.i")
    with pytest.raises(InputError, match="no artifact for device 'cpu'"):
        neml2.load_model(tmp_path / "model_aoti.i", "model")


def test_run_cli_on_the_stub(loadable_elastic: tuple[Path, str]) -> None:
    out, _ = loadable_elastic
    result = run_module("neml2.run", out / "model_aoti.i", "--model", "model", "--batch", "7")
    assert result.returncode == 0, result.stderr
    assert "model 'model' (LinearIsotropicElasticity, compiled) on cpu" in result.stdout
    assert re.search(r"output stress +7x6 ", result.stdout)
