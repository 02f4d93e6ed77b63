"""End to end for the implicit and the composed models: the fixtures tests/aoti/viscoplastic
and tests/aoti/thermoelastic compiled (cpu, -d : -p :; thermoelastic also renames its
inputs, output and two parameters), their meta, and the compiled graphs against the eager
models, convergence errors included."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import torch

import neml2
from neml2.errors import ConvergenceError, Neml2Error

from .conftest import FIXTURES, fixture_flags, run_module
from .test_viscoplasticity import DT_FAIL, STRAIN_FAIL, state, uniaxial

pytestmark = pytest.mark.aoti

F64 = torch.float64
GRAPHS = ["forward", "jvp", "jacobian", "param_jacobian", "param_vjp"]


def meta(out: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((out / "model" / "cpu" / "model_meta.json").read_text())
    return result


def test_viscoplastic_meta_declares_the_status(compiled_viscoplastic: Path) -> None:
    m = meta(compiled_viscoplastic)
    assert m["type"] == "J2Viscoplasticity"
    assert m["status"] == {"converged": "converged", "residual": "residual"}
    assert list(m["graphs"]) == GRAPHS
    for graph in GRAPHS:
        assert m["graphs"][graph]["returns"][-2:] == [
            {"role": "converged", "name": "converged"},
            {"role": "residual", "name": "residual"},
        ]
    assert [p["name"] for p in m["parameters"]] == [
        f"model.{k}" for k in ("E", "nu", "sy", "Q", "b", "eta", "n")
    ]
    assert [(v["name"], v["shape"]) for v in m["inputs"]] == [
        ("strain", [6]),
        ("old_plastic_strain", [6]),
        ("old_equivalent_plastic_strain", []),
        ("time_step", []),
    ]
    assert all(d["batched"] for d in m["derivatives"])


@pytest.fixture(scope="module")
def viscoplastic(compiled_viscoplastic: Path) -> tuple[Any, Any]:
    compiled = neml2.load_model(compiled_viscoplastic / "model_aoti.i", "model")
    eager = neml2.load_model(FIXTURES / "viscoplastic" / "model.i", "model")
    return compiled, eager


@pytest.mark.parametrize("batch", [0, 1, 33])
def test_compiled_viscoplastic_equals_eager(viscoplastic: tuple[Any, Any], batch: int) -> None:
    compiled, eager = viscoplastic
    torch.manual_seed(batch)
    x = state(
        torch.randn(batch, 6, dtype=F64) * 3e-3,
        old_p=torch.rand(batch, dtype=F64) * 0.01,
        dt=torch.rand(batch, dtype=F64) * 2,
    )
    v = {k: torch.randn_like(t) for k, t in x.items()}
    c = {o.name: torch.randn((batch, *o.shape), dtype=F64) for o in eager.outputs}
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
        torch.testing.assert_close(
            got, want, rtol=1e-9, atol=1e-9, msg=lambda m, method=method: f"{method}: {m}"
        )


def test_compiled_point_results_do_not_depend_on_the_batch(viscoplastic: tuple[Any, Any]) -> None:
    compiled, _ = viscoplastic
    torch.manual_seed(9)
    x = state(torch.randn(64, 6, dtype=F64) * 5e-3, dt=torch.rand(64, dtype=F64) * 3)
    whole = compiled.forward(x)
    part = compiled.forward({k: t[5:12] for k, t in x.items()})
    for name, tensor in part.items():
        assert torch.equal(tensor, whole[name][5:12])


def test_compiled_convergence_error_and_half_the_step(viscoplastic: tuple[Any, Any]) -> None:
    compiled, eager = viscoplastic
    x = state(uniaxial(0.001, STRAIN_FAIL, 0.002, STRAIN_FAIL), dt=DT_FAIL)
    for model in (compiled, eager):
        with pytest.raises(ConvergenceError) as info:
            model.forward(x)
        assert info.value.recoverable
        assert (info.value.failed, info.value.total) == (2, 4)
        assert str(info.value).startswith("model 'model': 2 of 4 points did not converge")
        # the points themselves: the two at STRAIN_FAIL, with residuals above tolerance
        assert info.value.converged.tolist() == [True, False, True, False]
        assert info.value.rows.tolist() == [1, 3]
        assert info.value.residual.shape == (2,)
        assert float(info.value.residual.max()) == pytest.approx(info.value.worst)
    with pytest.raises(ConvergenceError):
        compiled.jacobian(x)
    x["time_step"] = torch.tensor(DT_FAIL / 2, dtype=F64)  # unbatched: every point
    torch.testing.assert_close(compiled.forward(x), eager.forward(x), rtol=1e-9, atol=1e-9)
    # and the model is usable after the error
    assert compiled.forward(state(uniaxial(0.003)))["stress"].shape == (1, 6)


#: The fixture's [Solvers/newton]: the compiled values of its run-time settings.
NEWTON = {"abs_tol": 1e-10, "rel_tol": 1e-10, "max_its": 8}


def test_viscoplastic_meta_declares_the_settings(compiled_viscoplastic: Path) -> None:
    """Every graph takes newton's three settings right after the seven parameters."""
    m = meta(compiled_viscoplastic)
    assert m["settings"] == [
        {"name": "newton.abs_tol", "dtype": "float64", "value": 1e-10},
        {"name": "newton.rel_tol", "dtype": "float64", "value": 1e-10},
        {"name": "newton.max_its", "dtype": "int64", "value": 8},
    ]
    settings = [{"role": "setting", "name": s["name"]} for s in m["settings"]]
    for graph in GRAPHS:
        args = m["graphs"][graph]["args"]
        assert [a["role"] for a in args[:11]] == ["input"] * 4 + ["parameter"] * 7
        assert args[11:14] == settings, graph
        assert all(a["role"] in ("tangent", "cotangent") for a in args[14:]), graph
    shown = run_module("neml2.inspect_cli", compiled_viscoplastic / "model_aoti.i", "--check")
    assert shown.returncode == 0, shown.stderr
    assert "      newton.max_its  int64 = 8\n" in shown.stdout
    assert "      newton.rel_tol  float64 = 1e-10\n" in shown.stdout


def from_file(tmp_path: Path, **values: float) -> Any:
    """The eager fixture model built from its file with ``values`` in [Solvers/newton]."""
    text = (FIXTURES / "viscoplastic" / "model.i").read_text()
    for key, value in values.items():
        text, count = re.subn(rf"(?m)^(\s*){key} = \S+$", rf"\g<1>{key} = {value!r}", text)
        assert count == 1, key
    path = tmp_path / f"model_{len(list(tmp_path.iterdir()))}.i"
    path.write_text(text)
    return neml2.load_model(path, "model")


def test_compiled_solver_settings_change_the_solve(
    compiled_viscoplastic: Path, tmp_path: Path
) -> None:
    """Without recompiling: max_its 1 fails a step that converges with the compiled 8, 30
    converges the step that fails with 8, and looser tolerances give what a model built
    with them gives; each as the eager model from such a file."""
    compiled = neml2.load_model(compiled_viscoplastic / "model_aoti.i", "model")
    eager = neml2.load_model(FIXTURES / "viscoplastic" / "model.i", "model")
    assert compiled.solver_settings == eager.solver_settings == {"newton": NEWTON}
    torch.manual_seed(4)
    easy = state(uniaxial(1e-4, STRAIN_FAIL, 0.003), dt=DT_FAIL / 2)  # elastic, plastic x2
    hard = state(uniaxial(1e-4, STRAIN_FAIL), dt=DT_FAIL)
    default = compiled.forward(easy)
    torch.testing.assert_close(default, eager.forward(easy), rtol=1e-9, atol=1e-9)
    with pytest.raises(ConvergenceError):
        compiled.forward(hard)

    compiled.set_solver_settings("newton", max_its=1)
    assert compiled.solver_settings == {"newton": {**NEWTON, "max_its": 1}}
    for call in (lambda: compiled.forward(easy), lambda: compiled.jacobian(easy)):
        with pytest.raises(ConvergenceError) as info:
            call()
        assert (info.value.failed, info.value.total) == (2, 3)

    compiled.set_solver_settings("newton", max_its=30)
    wider = from_file(tmp_path, max_its=30)
    torch.testing.assert_close(compiled.forward(hard), wider.forward(hard), rtol=1e-9, atol=1e-9)

    loose = {"abs_tol": 1e-6, "rel_tol": 1e-3}
    compiled.set_solver_settings("newton", max_its=8, **loose)
    assert compiled.solver_settings == {"newton": {**NEWTON, **loose}}
    looser = from_file(tmp_path, **loose)
    c = {o.name: torch.randn((3, *o.shape), dtype=F64) for o in looser.outputs}
    for method, args in {"forward": (easy,), "jacobian": (easy,), "param_vjp": (easy, c)}.items():
        torch.testing.assert_close(
            getattr(compiled, method)(*args),
            getattr(looser, method)(*args),
            rtol=1e-9,
            atol=1e-9,
            msg=lambda m, method=method: f"{method}: {m}",
        )
    # the looser solve stops earlier: a result the tolerance of the comparison tells apart
    assert (compiled.forward(easy)["stress"] - default["stress"]).abs().max() > 1e-3


@pytest.mark.parametrize(
    ("solver", "values", "message"),
    [
        ("model", {"max_its": 3}, "unknown solver 'model' (expected solvers: newton)"),
        (
            "newton",
            {"rel_tol": float("nan")},
            "setting 'newton.rel_tol' is nan, expected a finite number >= 0",
        ),
        ("newton", {"max_its": 0}, "setting 'newton.max_its' is 0, expected an integer >= 1"),
    ],
)
def test_compiled_solver_settings_errors(
    viscoplastic: tuple[Any, Any], solver: str, values: dict[str, Any], message: str
) -> None:
    """One line naming the model and the setting; nothing changes, not even the good value
    given with the bad one."""
    compiled, _ = viscoplastic
    with pytest.raises(Neml2Error) as info:
        compiled.set_solver_settings(solver, abs_tol=1e-3, **values)
    assert str(info.value) == f"model 'model': {message}"
    assert compiled.solver_settings == {"newton": NEWTON}


#: The renames of the thermo-elastic fixture's flags.txt (input file name -> compiled name).
THERMO_NAMES = {"strain": "eps", "stress": "sigma", "elastic.E": "E", "thermal.alpha": "alpha"}


def renamed(value: Any) -> Any:
    """A result of the eager thermo-elastic model under the compiled model's names."""
    if isinstance(value, dict):
        return {THERMO_NAMES.get(k, k): renamed(v) for k, v in value.items()}
    return value


def test_compiled_thermoelastic_equals_eager(compiled_thermoelastic: Path) -> None:
    m = meta(compiled_thermoelastic)
    assert m["type"] == "ComposedModel"
    assert m["status"] is None
    assert [(v["name"], v.get("renamed_from")) for v in m["inputs"]] == [
        ("temperature", None),
        ("eps", "strain"),
    ]
    assert {(d["of"], d["wrt"], d["batched"]) for d in m["derivatives"]} == {
        ("sigma", "temperature", False),
        ("sigma", "eps", False),
    }
    assert m["graphs"]["forward"]["into"] == "forward_into.pt2"
    compiled = neml2.load_model(compiled_thermoelastic / "model_aoti.i", "model")
    eager = neml2.load_model(FIXTURES / "thermoelastic" / "model.i", "model")
    torch.manual_seed(2)
    x = {
        "strain": torch.randn(9, 6, dtype=F64) * 1e-3,
        "temperature": 300 + torch.rand(9, dtype=F64),
    }
    v = {"strain": torch.randn(9, 6, dtype=F64), "temperature": torch.randn(9, dtype=F64)}
    c = {"stress": torch.randn(9, 6, dtype=F64)}
    for method, args in {
        "forward": (x,),
        "jvp": (x, v),
        "jacobian": (x,),
        "param_jacobian": (x,),
        "param_vjp": (x, c),
    }.items():
        got = getattr(compiled, method)(*map(renamed, args))
        torch.testing.assert_close(got, renamed(getattr(eager, method)(*args)))
    assert compiled.jacobian(renamed(x))["sigma"]["temperature"].shape == (6,)
    assert list(compiled.named_parameters()) == ["alpha", "thermal.T0", "E", "elastic.nu"]


def test_compiled_thermoelastic_refuses_the_input_files_names(compiled_thermoelastic: Path) -> None:
    compiled = neml2.load_model(compiled_thermoelastic / "model_aoti.i", "model")
    x = {"eps": torch.zeros(2, 6, dtype=F64), "temperature": torch.full((2,), 300.0, dtype=F64)}
    with pytest.raises(neml2.Neml2Error) as info:
        compiled.forward({"strain": x["eps"], "temperature": x["temperature"]})
    assert str(info.value) == (
        "model 'model': unknown input 'strain' (expected inputs: temperature, eps); "
        "'strain' is now called 'eps' (neml2-compile --rename-input)"
    )
    with pytest.raises(neml2.Neml2Error) as info:
        compiled.param_vjp(x, {"stress": torch.ones(2, 6, dtype=F64)})
    assert str(info.value).endswith(
        "'stress' is now called 'sigma' (neml2-compile --rename-output)"
    )


def test_inspect_shows_both_names(compiled_thermoelastic: Path) -> None:
    result = run_module("neml2.inspect_cli", compiled_thermoelastic / "model_aoti.i")
    assert result.returncode == 0, result.stderr
    lines = [line.split() for line in result.stdout.splitlines()]
    assert ["eps", "[6]", "(renamed", "from", "strain)"] in lines
    assert ["sigma", "[6]", "(renamed", "from", "stress)"] in lines
    assert ["E", "[]", "=", "200000", "(renamed", "from", "elastic.E)"] in lines
    assert ["temperature", "[]"] in lines


def test_renaming_a_compiled_artifact_compiles_nothing(
    compiled_thermoelastic: Path, tmp_path: Path
) -> None:
    """The fixture's flags without its renames: the graphs are kept, model_meta.json is
    rewritten with the input file's names, and the artifact answers as before under them."""
    out = tmp_path / "out"
    shutil.copytree(compiled_thermoelastic, out)
    flags = fixture_flags("thermoelastic")
    plain = flags[: flags.index("--rename-input")]
    assert not any(flag.startswith("--rename") for flag in plain)
    folder = out / "model" / "cpu"
    graphs = {p.name: p.read_bytes() for p in folder.glob("*.pt2")}
    result = run_module(
        "neml2.compile", FIXTURES / "thermoelastic" / "model.i", "--model", "model", *plain,
        "-o", out,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == (
        f"{folder}: only the names changed (--rename-*): model_meta.json rewritten, "
        "no graph compiled"
    )
    assert {p.name: p.read_bytes() for p in folder.glob("*.pt2")} == graphs
    m = meta(out)
    assert "renamed_from" not in json.dumps(m)
    assert [v["name"] for v in m["inputs"]] == ["temperature", "strain"]
    renamed_model = neml2.load_model(compiled_thermoelastic / "model_aoti.i", "model")
    plain_model = neml2.load_model(out / "model_aoti.i", "model")
    x = {"strain": torch.randn(5, 6, dtype=F64) * 1e-3, "temperature": torch.rand(5, dtype=F64)}
    assert list(plain_model.named_parameters()) == [
        "thermal.alpha",
        "thermal.T0",
        "elastic.E",
        "elastic.nu",
    ]
    assert torch.equal(plain_model.forward(x)["stress"], renamed_model.forward(renamed(x))["sigma"])
    blocks = plain_model.param_jacobian(x)["stress"]
    assert torch.equal(blocks["elastic.E"], renamed_model.param_jacobian(renamed(x))["sigma"]["E"])
