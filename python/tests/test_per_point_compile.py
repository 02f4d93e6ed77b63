"""neml2-compile --per-point and the compiled model's per-point parameters.

The meta fields (doc/artifacts.md: ``per_point`` and each graph's per-point variant), the
option's mistakes, renames, the up-to-date check and the loader's checks of malformed
fields are checked with the compile step replaced (seconds); one ``aoti`` test compiles the
elastic model with ``-d : -p : --per-point :`` and compares the loaded model's per-point
calls with the eager model's.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import torch

import neml2
from neml2 import compile as nc
from neml2 import validate
from neml2.compile import workers as compile_workers
from neml2.errors import ArtifactError, Neml2Error
from neml2.shim import CompiledModel

from .conftest import FIXTURES, run_module
from .test_cli import assert_user_error

ELASTIC = FIXTURES / "elastic_promoted" / "model.i"
THERMOELASTIC = FIXTURES / "thermoelastic" / "model.i"
F64 = torch.float64


@pytest.fixture
def fake_compile(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Replace export + AOTInductor by writing a small file; record the files written."""
    written: list[str] = []

    def fake(module: nc.Graph, device: torch.device, path: Path) -> None:
        module.example_args(device)  # the per-point examples build
        written.append(path.name)
        path.write_bytes(path.name.encode() * 10)

    monkeypatch.setattr(compile_workers, "compile_graph", fake)
    return written


def compile_here(
    capsys: pytest.CaptureFixture[str], source: Path, out: Path, *options: str
) -> tuple[int, str, str]:
    status = nc.main([str(source), "--model", "model", "-o", str(out), *options])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def meta_of(out: Path) -> dict[str, Any]:
    meta: dict[str, Any] = json.loads((out / "model" / "cpu" / "model_meta.json").read_text())
    return meta


def test_every_graph_gets_its_per_point_variant(
    fake_compile: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    options = ["-d", ":", "-p", ":", "--per-point", ":", "--into", "forward", "param_vjp"]
    status, out, err = compile_here(capsys, ELASTIC, tmp_path, *options)
    assert status == 0, err
    graphs = ["forward", "jvp", "jacobian", "param_jacobian", "param_vjp"]
    # param_vjp returns only adjoints, summed: no in-place variant; its per-point variant's
    # adjoints are per point, so that one has
    assert fake_compile == [
        *(f"{g}.pt2" for g in graphs),
        "forward_into.pt2",
        *(f"{g}_per_point.pt2" for g in graphs),
        "forward_per_point_into.pt2",
        "param_vjp_per_point_into.pt2",
    ]
    assert "13 graphs to compile" in out.splitlines()[0]
    meta = meta_of(tmp_path)
    assert meta["per_point"] == ["model.E", "model.nu"]
    strain = {"role": "input", "name": "strain"}
    shared = [{"role": "parameter", "name": p} for p in meta["per_point"]]
    points = [{**p, "per_point": True} for p in shared]
    variants = {g: meta["graphs"][g]["per_point"] for g in graphs}
    assert variants["forward"] == {
        "file": "forward_per_point.pt2",
        "args": [strain, *points],
        "returns": [{"role": "output", "name": "stress"}],
        "into": "forward_per_point_into.pt2",
    }
    assert meta["graphs"]["forward"]["args"] == [strain, *shared]
    assert variants["jvp"]["args"] == [strain, *points, {"role": "tangent", "name": "strain"}]
    # the elastic stiffness is batch-independent, until E and nu are per point
    assert meta["derivatives"] == [{"of": "stress", "wrt": "strain", "batched": False}]
    assert variants["jacobian"]["returns"] == [
        {"role": "derivative", "of": "stress", "wrt": "strain", "batched": True}
    ]
    assert variants["param_jacobian"]["returns"] == [
        {"role": "derivative", "of": "stress", "wrt": p, "batched": True} for p in meta["per_point"]
    ]
    assert variants["param_vjp"] == {
        "file": "param_vjp_per_point.pt2",
        "args": [strain, *points, {"role": "cotangent", "name": "stress"}],
        "returns": [{"role": "adjoint", "name": p, "per_point": True} for p in meta["per_point"]],
        "into": "param_vjp_per_point_into.pt2",
    }
    assert "into" not in meta["graphs"]["param_vjp"]
    validate.check_meta(tmp_path / "model" / "cpu" / "model_meta.json", meta)
    assert nc.graph_files(meta)[-7:] == [f"{g}_per_point.pt2" for g in graphs] + [
        "forward_per_point_into.pt2",
        "param_vjp_per_point_into.pt2",
    ]
    # the same command again: up to date
    assert compile_here(capsys, ELASTIC, tmp_path, *options)[1].endswith(
        "0 graphs compiled, 1 device folder up to date\n"
    )


def test_some_parameters_per_point_and_renamed(
    fake_compile: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    options = ["-d", ":", "-p", ":", "--per-point", "elastic.E"]
    renamed = ["--rename-parameter", "elastic.E:E", "thermal.alpha:alpha"]
    assert compile_here(capsys, THERMOELASTIC, tmp_path, *options)[0] == 0
    meta = meta_of(tmp_path)
    params = [p["name"] for p in meta["parameters"]]
    assert meta["per_point"] == ["elastic.E"]
    vjp = meta["graphs"]["param_vjp"]["per_point"]
    assert [r.get("per_point", False) for r in vjp["returns"]] == [p == "elastic.E" for p in params]
    # both blocks are batch-independent (the model is linear) until E is per point
    blocks = {
        (r["of"], r["wrt"]): r["batched"]
        for r in meta["graphs"]["jacobian"]["per_point"]["returns"]
    }
    assert blocks == {("stress", "strain"): True, ("stress", "temperature"): True}
    assert {(d["of"], d["wrt"]): d["batched"] for d in meta["derivatives"]} == {
        ("stress", "strain"): False,
        ("stress", "temperature"): False,
    }
    # a rename rewrites the meta, per-point names included, and compiles nothing
    before = len(fake_compile)
    status, out, _ = compile_here(capsys, THERMOELASTIC, tmp_path, *options, *renamed)
    assert status == 0
    assert "only the names changed" in out
    assert len(fake_compile) == before
    meta = meta_of(tmp_path)
    assert meta["per_point"] == ["E"]
    args = meta["graphs"]["forward"]["per_point"]["args"]
    assert {"role": "parameter", "name": "E", "per_point": True} in args
    assert {"role": "parameter", "name": "alpha"} in args
    adjoints = meta["graphs"]["param_vjp"]["per_point"]["returns"]
    assert {"role": "adjoint", "name": "E", "per_point": True} in adjoints
    validate.check_meta(tmp_path / "model" / "cpu" / "model_meta.json", meta)
    # another per-point set recompiles
    status, out, _ = compile_here(capsys, THERMOELASTIC, tmp_path, "-d", ":", "-p", ":", *renamed)
    assert status == 0
    assert "changed: flags, dtype or variables" in out.splitlines()[0]
    assert "per_point" not in meta_of(tmp_path)
    assert "per_point" not in meta_of(tmp_path)["graphs"]["forward"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ["-p", "E", "--per-point", "nu"],
            "--per-point nu: 'nu' is not promoted; add -p nu (promoted parameters: model.E, "
            "or ':' for all)",
        ),
        (
            ["-p", ":", "--per-point", "G"],
            "--per-point G: model 'model' has no parameter 'G' (promoted parameters: model.E, "
            "model.nu, or ':' for all)",
        ),
        (["--per-point", ":"], "--per-point :: no parameter is promoted; add -p NAME or -p :"),
    ],
    ids=["not-promoted", "unknown", "none-promoted"],
)
def test_per_point_names_must_be_promoted(tmp_path: Path, options: list[str], message: str) -> None:
    result = run_module("neml2.compile", ELASTIC, "--model", "model", *options, "-o", tmp_path)
    assert_user_error(result, f"neml2-compile: error: {message}")
    assert list(tmp_path.iterdir()) == []


def test_a_solve_that_cannot_take_them_is_refused(
    tmp_path: Path, fake_compile: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "model.i"
    source.write_text(
        (FIXTURES / "viscoplastic" / "model.i").read_text()
        + "[Settings]\n  [example_batch_shape]\n    strain = '(1; 2)'\n  []\n[]\n"
    )
    status, _, err = compile_here(capsys, source, tmp_path / "out", "-p", "E", "--per-point", "E")
    assert status == 2
    assert err == (
        "neml2-compile: error: --per-point E: model 'model': per-point parameters are not "
        "supported for J2Viscoplasticity 'model', which runs a Newton solve inside "
        "(parameters model.E); give them one value for every point\n"
    )
    assert fake_compile == []


# --- the loader's checks of the fields ---------------------------------------------


def refuse(meta: dict[str, Any], path: Path, message: str) -> None:
    with pytest.raises(ArtifactError) as err:
        validate.check_meta(path, meta)
    assert str(err.value) == f"{path}: {message}"


def _drop_variant(m: dict[str, Any]) -> None:
    del m["graphs"]["jvp"]["per_point"]


def _unmark(m: dict[str, Any]) -> None:
    del m["graphs"]["forward"]["per_point"]["args"][2]["per_point"]


def _no_batched(m: dict[str, Any]) -> None:
    del m["graphs"]["jacobian"]["per_point"]["returns"][0]["batched"]


def _short(m: dict[str, Any]) -> None:
    m["graphs"]["forward"]["per_point"]["args"].pop()


def _swapped(m: dict[str, Any]) -> None:
    args = m["graphs"]["forward"]["per_point"]["args"]
    args[1], args[2] = args[2], args[1]


def _mark_graph(m: dict[str, Any]) -> None:
    m["graphs"]["forward"]["args"][1]["per_point"] = True


def _only_e(m: dict[str, Any]) -> None:
    m["per_point"] = ["model.E"]


MALFORMED = [
    (lambda m: m.update(per_point="model.E"), "field 'per_point' must be an array, found a string"),
    (lambda m: m.update(per_point=[1]), "field 'per_point[0]' is not a string"),
    (
        lambda m: m.update(per_point=["model.G"]),
        "field 'per_point[0]' names 'model.G', which is not a promoted parameter",
    ),
    (
        lambda m: m.update(per_point=["model.E", "model.E"]),
        "field 'per_point' lists 'model.E' twice",
    ),
    (
        lambda m: m.update(per_point=[]),
        "field 'graphs.forward.per_point' is present but 'per_point' lists no parameter",
    ),
    (_drop_variant, "field 'graphs.jvp.per_point' is missing: 'per_point' lists parameters"),
    (
        _unmark,
        "field 'graphs.forward.per_point.args[2].per_point' must be true for 'model.nu'",
    ),
    (
        _only_e,
        "field 'graphs.forward.per_point.args[2].per_point' must be absent for 'model.nu'",
    ),
    (
        _no_batched,
        "field 'graphs.jacobian.per_point.returns[0].batched' must be given for a derivative "
        "and only there",
    ),
    (_short, "field 'graphs.forward.per_point.args' has 2 slots, the graph has 3"),
    (_swapped, "field 'graphs.forward.per_point.args[1]' is not the graph's slot in that place"),
    (
        _mark_graph,
        "field 'graphs.forward.args[1].per_point' belongs to a graph's per-point variant "
        "(graphs.<graph>.per_point)",
    ),
    (
        lambda m: m["graphs"]["forward"]["per_point"]["args"][1].update(per_point="yes"),
        "field 'graphs.forward.per_point.args[1].per_point' must be a boolean, found a string",
    ),
    (
        lambda m: m["graphs"]["forward"]["per_point"].update(file="gone.pt2"),
        "graph file '{folder}/gone.pt2' is missing",
    ),
]


def test_malformed_fields_are_refused(
    fake_compile: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    options = ["-d", ":", "-p", ":", "--per-point", ":"]
    assert compile_here(capsys, ELASTIC, tmp_path, *options)[0] == 0
    path = tmp_path / "model" / "cpu" / "model_meta.json"
    good = meta_of(tmp_path)
    validate.check_meta(path, good)
    for change, message in MALFORMED:
        meta = copy.deepcopy(good)
        change(meta)
        refuse(meta, path, message.format(folder=path.parent))


def loader(per_point: list[str], renamed: dict[str, str] | None = None) -> CompiledModel:
    """A compiled model's parameter bookkeeping without graphs (set_parameter's checks)."""
    model = object.__new__(CompiledModel)
    model.name = "model"
    model.meta = {
        "parameters": [
            {"name": "model.E", "shape": []},
            {"name": (renamed or {}).get("model.nu", "model.nu"), "shape": []},
        ]
    }
    if renamed:
        model.meta["parameters"][1]["renamed_from"] = "model.nu"
    names = [p["name"] for p in model.meta["parameters"]]
    model.parameters = {n: torch.tensor(1.0, dtype=F64) for n in names}
    model._shapes = {n: () for n in names}
    model.per_point = per_point
    model._renamed_parameters = {"model.nu": renamed["model.nu"]} if renamed else {}
    return model


def test_set_parameter_of_the_compiled_model() -> None:
    model = loader(["model.E"], {"model.nu": "poisson"})
    model.set_parameter("model.E", torch.ones(3, dtype=F64))
    assert model.parameters["model.E"].shape == (3,)
    model.set_parameter("poisson", torch.tensor(0.3, dtype=F64))
    cases = [
        (
            "poisson",
            torch.full((3,), 0.3, dtype=F64),
            "model 'model': parameter 'poisson' was not compiled per point: give it shape (), "
            "or add --per-point model.nu to neml2-compile",
        ),
        (
            "model.nu",
            torch.tensor(0.3, dtype=F64),
            "model 'model': unknown parameter 'model.nu' (expected parameters: model.E, "
            "poisson); 'model.nu' is now called 'poisson' (neml2-compile --rename-parameter)",
        ),
        (
            "model.E",
            torch.ones(3, 1, dtype=F64),
            "model 'model': parameter 'model.E' has shape (3, 1), expected () or (B,)",
        ),
    ]
    for name, value, message in cases:
        before = dict(model.parameters)
        with pytest.raises(Neml2Error) as err:
            model.set_parameter(name, value)
        assert str(err.value) == message
        assert model.parameters == before


# --- compiled and loaded -------------------------------------------------------------


def flat(tree: dict[str, Any], prefix: str = "") -> dict[str, torch.Tensor]:
    out: dict[str, torch.Tensor] = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            out.update(flat(value, f"{prefix}{key}/"))
        else:
            out[prefix + key] = value
    return out


@pytest.mark.aoti
def test_compiled_per_point_calls_match_the_eager_model(
    compiled_elastic: tuple[Path, str],
) -> None:
    # the elastic_promoted fixture compiles every parameter per point (its flags.txt)
    stub = compiled_elastic[0] / "model_aoti.i"
    check = run_module("neml2.inspect_cli", stub, "--check")
    assert check.returncode == 0, check.stderr
    assert "per point    model.E, model.nu" in check.stdout
    assert "per point: forward_per_point.pt2" in check.stdout
    compiled = neml2.load_model(stub, "model")
    eager = neml2.load_model(ELASTIC, "model")
    assert isinstance(compiled, CompiledModel)
    B = 5
    g = torch.Generator().manual_seed(3)
    x = {"strain": 1e-3 * torch.randn(B, 6, generator=g, dtype=F64)}
    v = {"strain": torch.randn(B, 6, generator=g, dtype=F64)}
    c = {"stress": torch.randn(B, 6, generator=g, dtype=F64)}
    E = 1e5 * (1 + torch.rand(B, generator=g, dtype=F64))
    nu = 0.2 + 0.1 * torch.rand(B, generator=g, dtype=F64)

    def agree() -> None:
        for call, args in (
            ("forward", (x,)),
            ("jvp", (x, v)),
            ("jacobian", (x,)),
            ("param_jacobian", (x,)),
            ("param_vjp", (x, c)),
        ):
            got = flat(getattr(compiled, call)(*args))
            want = flat(getattr(eager, call)(*args))
            assert got.keys() == want.keys()
            for key, value in want.items():
                assert got[key].shape == value.shape, f"{call} {key}"
                scale = float(value.abs().max())
                torch.testing.assert_close(
                    got[key], value, rtol=1e-12, atol=1e-12 * scale, msg=f"{call} {key}"
                )

    # E per point, nu shared (its adjoint summed over the batch), then both per point
    for model in (compiled, eager):
        model.set_parameter("model.E", E)
    agree()
    assert compiled.param_vjp(x, c)["model.nu"].shape == ()
    assert compiled.jacobian(x)["stress"]["strain"].shape == (B, 6, 6)
    for model in (compiled, eager):
        model.set_parameter("model.nu", nu)
    agree()
    # one point's strain for every point, and a batch that is not B
    stress = compiled.forward({"strain": x["strain"][0]})["stress"]
    assert stress.shape == (B, 6)
    with pytest.raises(Neml2Error) as err:
        compiled.forward({"strain": x["strain"][:3]})
    assert str(err.value) == (
        "model 'model': batch sizes disagree: parameter 'model.E' has 5 but input 'strain' has 3"
    )
    # shared again: the graphs without per-point parameters, the unbatched stiffness
    compiled.set_parameter("model.E", E[0].clone())
    compiled.set_parameter("model.nu", nu[0].clone())
    assert compiled.jacobian(x)["stress"]["strain"].shape == (6, 6)
