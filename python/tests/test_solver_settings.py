"""Run-time solver settings without compiling: the graphs' ``setting`` arguments and the
meta's ``settings`` (doc/artifacts.md), the solves reading those arguments (the bracketed
Newton of J2Viscoplasticity, ImplicitUpdate's Newton and its line search), the default
solver's name, a solver shared by two models, and the eager model's ``solver_settings`` /
``set_solver_settings`` with the errors they share with the compiled model.

The graphs run eagerly here (``Graph`` called with tensors, the solves then read the
tensors as the traced graph does); tests/test_compile.py runs an exported graph with
other settings, and test_aoti_models.py the compiled fixture."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import torch

from neml2 import hit, validate
from neml2.compile import Graph, Selection, build_meta, select_pairs, select_params
from neml2.errors import ArtifactError, ConvergenceError, Neml2Error
from neml2.models import Model
from neml2.models.sub_batch import build_with_settings
from neml2.solvers import DEFAULT_SOLVER, solver_table

from .conftest import FIXTURES, REPO
from .test_elasticity import make as make_elastic
from .test_viscoplasticity import DT_FAIL, PARAMS, STRAIN_FAIL, state, uniaxial

F64 = torch.float64
CPU = torch.device("cpu")
GRAPHS = ["forward", "jvp", "jacobian", "param_jacobian", "param_vjp"]
VISCOPLASTIC = FIXTURES / "viscoplastic" / "model.i"
J2_COMPOSED = FIXTURES / "j2_composed" / "model.i"
LINE_SEARCH = REPO / "tests" / "neml2_inputs" / "crystal" / "line_search_crystal.i"


def build(text: str, name: str = "model") -> Model:
    return build_with_settings(hit.parse(text, "settings.i"), name)


def with_values(text: str, solver: str, **values: float) -> str:
    """``text`` with the keys ``values`` set in its ``[Solvers/<solver>]`` block."""
    block = re.search(rf"\n  \[{re.escape(solver)}\]\n(.*?)\n  \[\]\n", text, re.S)
    assert block is not None, solver
    body = block.group(1)
    for key, value in values.items():
        body, count = re.subn(rf"(?m)^(\s*){key} = \S+$", rf"\g<1>{key} = {value!r}", body)
        if not count:
            body += f"\n    {key} = {value!r}"
    return text[: block.start(1)] + body + text[block.end(1) :]


# --- the contract: args and meta ----------------------------------------------------------


def test_meta_and_args_of_an_implicit_model() -> None:
    """-d : -p :: after the parameters, every graph takes newton's abs_tol, rel_tol and
    max_its, then its tangents or cotangents; the meta lists them with their values."""
    model = build(VISCOPLASTIC.read_text())
    sel = Selection(select_pairs(model, [":"]), select_params(model, [":"]))
    meta = build_meta(model, CPU, sel)
    assert meta["settings"] == [
        {"name": "newton.abs_tol", "dtype": "float64", "value": 1e-10},
        {"name": "newton.rel_tol", "dtype": "float64", "value": 1e-10},
        {"name": "newton.max_its", "dtype": "int64", "value": 8},
    ]
    inputs = [{"role": "input", "name": v.name} for v in model.inputs]
    params = [{"role": "parameter", "name": p} for p in model.parameters]
    keys = ("abs_tol", "rel_tol", "max_its")
    settings = [{"role": "setting", "name": f"newton.{k}"} for k in keys]
    tail = {
        "jvp": [{"role": "tangent", "name": v.name} for v in model.inputs],
        "param_vjp": [{"role": "cotangent", "name": v.name} for v in model.outputs],
    }
    assert list(meta["graphs"]) == GRAPHS
    for graph in GRAPHS:
        expected = [*inputs, *params, *settings, *tail.get(graph, [])]
        assert meta["graphs"][graph]["args"] == expected, graph


def test_float32_tolerances_are_in_the_models_dtype() -> None:
    model = build(VISCOPLASTIC.read_text())
    meta = build_meta(model, CPU, Selection([], []), torch.float32)
    assert [(s["name"], s["dtype"]) for s in meta["settings"]] == [
        ("newton.abs_tol", "float32"),
        ("newton.rel_tol", "float32"),
        ("newton.max_its", "int64"),
    ]
    module = Graph(model, "forward", Selection([], []), torch.float32)
    assert module.setting("newton.rel_tol").dtype == torch.float32
    assert module.setting("newton.max_its").dtype == torch.int64
    assert module.setting("newton.max_its").shape == ()


def test_an_explicit_model_has_no_settings() -> None:
    model = make_elastic("100 0.3", "YOUNGS_MODULUS POISSONS_RATIO")
    sel = Selection(select_pairs(model, [":"]), select_params(model, [":"]))
    meta = build_meta(model, CPU, sel)
    assert meta["settings"] == []
    for graph in GRAPHS:
        assert all(a["role"] != "setting" for a in meta["graphs"][graph]["args"])
    assert model.solver_settings == {}
    with pytest.raises(Neml2Error) as info:
        model.set_solver_settings("newton", max_its=3)
    assert str(info.value) == (
        "model 'model': unknown solver 'newton' (expected solvers: none, the model solves "
        "no equation)"
    )


#: j2_composed's ImplicitUpdate beside a J2Viscoplasticity on the same strain (its other
#: variables renamed), composed; SOLVER is the J2Viscoplasticity's ``solver`` line.
BESIDE = """
  [vp]
    type = J2Viscoplasticity
{params}    stress = 'stress_b'
    plastic_strain = 'plastic_strain_b'
    equivalent_plastic_strain = 'p_b'
    old_plastic_strain = 'plastic_strain~1'
    old_equivalent_plastic_strain = 'p_b~1'
{solver}  []
  [both]
    type = ComposedModel
    models = 'model vp'
  []
[]
"""


def beside(solver: str, update_solver: bool = True) -> str:
    text = J2_COMPOSED.read_text()
    if not update_solver:
        text = text.replace("    solver = 'newton'\n", "")
    params = "".join(f"    {k} = {v!r}\n" for k, v in PARAMS.items())
    # [Models] closes the file: the blocks go before its last line
    return text[: text.rindex("[]")] + BESIDE.format(params=params, solver=solver).lstrip("\n")


def test_a_shared_solver_appears_once_and_solvers_are_in_name_order() -> None:
    """ImplicitUpdate and J2Viscoplasticity both name [Solvers/newton]: one solver; a third
    model without ``solver`` adds the default solver, which sorts first."""
    shared = build(beside("    solver = newton\n"), "both")
    assert list(shared.solver_settings) == ["newton"]
    assert [u.name for u in shared.solver_users()] == ["return_map", "vp"]
    names = [a["name"] for a in Graph(shared, "forward", Selection([], [])).args[-3:]]
    assert names == ["newton.abs_tol", "newton.rel_tol", "newton.max_its"]

    text = beside("    solver = newton\n").replace("models = 'model vp'", "models = 'model vp vp2'")
    third = (
        "  [vp2]\n    type = J2Viscoplasticity\n"
        + "".join(f"    {k} = {v!r}\n" for k, v in PARAMS.items())
        + "    stress = 'stress_c'\n    plastic_strain = 'plastic_strain_c'\n"
        "    equivalent_plastic_strain = 'p_c'\n    old_equivalent_plastic_strain = 'p_c~1'\n"
        "    old_plastic_strain = 'plastic_strain~1'\n  []\n"
    )
    text = text.replace("  [both]\n", third + "  [both]\n")
    model = build(text, "both")
    assert model.solver_settings == {
        DEFAULT_SOLVER: {"abs_tol": 1e-10, "rel_tol": 1e-8, "max_its": 20},
        "newton": {"abs_tol": 1e-14, "rel_tol": 1e-13, "max_its": 17},
    }
    args = Graph(model, "forward", Selection([], [])).args
    assert [a["name"] for a in args if a["role"] == "setting"] == [
        "default.abs_tol",
        "default.rel_tol",
        "default.max_its",
        "newton.abs_tol",
        "newton.rel_tol",
        "newton.max_its",
    ]
    # a change reaches both models of the shared solver, and only them
    model.set_solver_settings("newton", max_its=3)
    assert [(u.name, u.solver.max_its) for u in model.solver_users()] == [
        ("return_map", 3),
        ("vp", 3),
        ("vp2", 20),
    ]


def test_the_default_solver_of_an_implicit_update() -> None:
    """An ImplicitUpdate without ``solver``: the solver 'default', with max_its 25."""
    model = build(J2_COMPOSED.read_text().replace("    solver = 'newton'\n", ""))
    assert model.solver_settings == {"default": {"abs_tol": 1e-10, "rel_tol": 1e-8, "max_its": 25}}


def test_one_solver_with_two_values_is_refused() -> None:
    """Both models without ``solver`` use 'default', but with max_its 25 (ImplicitUpdate)
    and 20 (J2Viscoplasticity): one solver cannot take both at run time."""
    model = build(beside("", update_solver=False), "both")
    message = (
        "model 'both': solver 'default' has max_its = 25 in 'return_map' but max_its = 20 "
        "in 'vp'; a solver has one value of each setting: set max_its in [Solvers/default] "
        "(or the default solver of a model without 'solver') or give the models distinct "
        "solvers"
    )
    with pytest.raises(Neml2Error) as info:
        solver_table(model)
    assert str(info.value) == message
    with pytest.raises(Neml2Error, match="solver 'default' has max_its = 25"):
        Graph(model, "forward", Selection([], []))


def test_compiling_a_conflicting_model_is_one_line(tmp_path: Path) -> None:
    from neml2.compile import Request, prepare

    source = tmp_path / "both.i"
    source.write_text(beside("", update_solver=False))
    with pytest.raises(Neml2Error, match=r"^model 'both': solver 'default' has max_its = 25"):
        prepare(Request(file=str(source), model="both"))


# --- the solves read the setting arguments -------------------------------------------


def j2_state() -> dict[str, torch.Tensor]:
    return {
        "strain": uniaxial(2e-3, 3e-3),
        "plastic_strain~1": torch.zeros(2, 6, dtype=F64),
        "equivalent_plastic_strain~1": torch.zeros(2, dtype=F64),
        "t": torch.ones(2, dtype=F64),
        "t~1": torch.zeros(2, dtype=F64),
    }


def line_search_state(model: Model) -> dict[str, torch.Tensor]:
    from .test_crystal_line_search import STEP

    return {v.name: STEP[v.name] for v in model.inputs}


#: (id, file, model, solver, state, looser tolerances that change the result)
SOLVES = [
    (
        "j2-viscoplasticity",
        VISCOPLASTIC,
        "model",
        "newton",
        lambda m: state(uniaxial(0.001, STRAIN_FAIL, 0.003), dt=DT_FAIL / 2),
        {"abs_tol": 1e-6, "rel_tol": 1e-3},
    ),
    (
        "implicit-update",
        J2_COMPOSED,
        "model",
        "newton",
        lambda m: j2_state(),
        {"abs_tol": 1e-6, "rel_tol": 1e-3},
    ),
    (
        "line-search",
        LINE_SEARCH,
        "backtracking",
        "backtrack",
        line_search_state,
        {"abs_tol": 1e-8, "rel_tol": 1e-6},
    ),
]


def graph_call(model: Model, x: dict[str, torch.Tensor], **values: float) -> tuple[Any, ...]:
    """The forward graph called eagerly, with the compiled settings but ``values``."""
    module = Graph(model, "forward", Selection([], []))
    args = []
    for spec in module.args:
        if spec["role"] == "input":
            args.append(x[spec["name"]])
            continue
        assert spec["role"] == "setting"
        value = values.get(spec["name"].rpartition(".")[2])
        tensor = module.setting(spec["name"])
        args.append(tensor if value is None else torch.tensor(value, dtype=tensor.dtype))
    return tuple(module(*args))


@pytest.mark.parametrize(
    ("path", "name", "solver", "make_state", "looser"),
    [case[1:] for case in SOLVES],
    ids=[case[0] for case in SOLVES],
)
def test_the_solve_reads_the_setting_arguments(
    path: Path, name: str, solver: str, make_state: Any, looser: dict[str, float]
) -> None:
    """With the compiled values the graph gives the eager model's results bitwise; with
    max_its 1 no point converges; with looser tolerances it gives, bitwise, what the model
    built from a file with those tolerances gives, which is not the default result."""
    text = path.read_text()
    model = build(text, name)
    x = make_state(model)
    ev = model.evaluate(x, model.parameters)
    default = graph_call(model, x)
    assert ev.status is not None
    assert bool(ev.status.converged.all())
    for got, out in zip(default, model.outputs, strict=False):
        assert torch.equal(got, ev.outputs[out.name]), out.name
    assert torch.equal(default[-2], ev.status.converged)
    assert torch.equal(default[-1], ev.status.residual)

    capped = graph_call(model, x, max_its=1)
    assert not bool(capped[-2].any())

    loose = graph_call(model, x, **looser)
    other = build(with_values(text, solver, **looser), name)
    want = other.evaluate(x, other.parameters)
    assert bool(loose[-2].all())
    for got, out in zip(loose, other.outputs, strict=False):
        assert torch.equal(got, want.outputs[out.name]), out.name
    assert any(not torch.equal(a, b) for a, b in zip(loose[:-2], default[:-2], strict=True))


# --- the eager model's solver_settings / set_solver_settings ---------------------------


def test_eager_settings_change_the_solve() -> None:
    """max_its 1 fails a step that converges with the file's 8; more than 8 converges the
    step that fails with 8, as a model built with that cap does."""
    model = build(VISCOPLASTIC.read_text())
    assert model.solver_settings == {"newton": {"abs_tol": 1e-10, "rel_tol": 1e-10, "max_its": 8}}
    # the first point stays elastic (no update needed), the second flows
    easy = state(uniaxial(1e-4, STRAIN_FAIL), dt=DT_FAIL / 2)
    hard = state(uniaxial(1e-4, STRAIN_FAIL), dt=DT_FAIL)
    before = model.forward(easy)
    with pytest.raises(ConvergenceError):
        model.forward(hard)

    model.set_solver_settings("newton", max_its=1)
    assert model.solver_settings["newton"] == {"abs_tol": 1e-10, "rel_tol": 1e-10, "max_its": 1}
    with pytest.raises(ConvergenceError) as info:
        model.forward(easy)
    assert (info.value.failed, info.value.total) == (1, 2)

    model.set_solver_settings("newton", max_its=30)
    wider = build(with_values(VISCOPLASTIC.read_text(), "newton", max_its=30))
    for key, value in wider.forward(hard).items():
        assert torch.equal(model.forward(hard)[key], value)
    model.set_solver_settings("newton", max_its=8)
    for key, value in model.forward(easy).items():
        assert torch.equal(value, before[key])


def test_eager_tolerances_change_the_solve() -> None:
    model = build(VISCOPLASTIC.read_text())
    x = state(uniaxial(0.001, STRAIN_FAIL), dt=DT_FAIL / 2)
    model.set_solver_settings("newton", abs_tol=1e-6, rel_tol=1e-3)
    other = build(with_values(VISCOPLASTIC.read_text(), "newton", abs_tol=1e-6, rel_tol=1e-3))
    assert model.solver_settings == other.solver_settings
    got, want = model.forward(x), other.forward(x)
    for key, value in want.items():
        assert torch.equal(got[key], value)


NOT_TOL = "expected a finite number >= 0"
NOT_COUNT = "expected an integer >= 1"


@pytest.mark.parametrize(
    ("solver", "values", "message"),
    [
        ("newtn", {"max_its": 3}, "unknown solver 'newtn' (expected solvers: newton)"),
        ("newton", {"abs_tol": -1.0}, f"setting 'newton.abs_tol' is -1.0, {NOT_TOL}"),
        ("newton", {"rel_tol": float("nan")}, f"setting 'newton.rel_tol' is nan, {NOT_TOL}"),
        ("newton", {"abs_tol": float("inf")}, f"setting 'newton.abs_tol' is inf, {NOT_TOL}"),
        ("newton", {"rel_tol": "1e-8"}, f"setting 'newton.rel_tol' is '1e-8', {NOT_TOL}"),
        ("newton", {"abs_tol": True}, f"setting 'newton.abs_tol' is True, {NOT_TOL}"),
        ("newton", {"rel_tol": 10**400}, f"setting 'newton.rel_tol' is {10**400}, {NOT_TOL}"),
        ("newton", {"max_its": 0}, f"setting 'newton.max_its' is 0, {NOT_COUNT}"),
        ("newton", {"max_its": -4}, f"setting 'newton.max_its' is -4, {NOT_COUNT}"),
        ("newton", {"max_its": 2.0}, f"setting 'newton.max_its' is 2.0, {NOT_COUNT}"),
        ("newton", {"max_its": False}, f"setting 'newton.max_its' is False, {NOT_COUNT}"),
        (
            "newton",
            {"max_its": 2**63},
            f"setting 'newton.max_its' is {2**63}, {NOT_COUNT} (at most {2**63 - 1})",
        ),
    ],
)
def test_eager_settings_errors(solver: str, values: dict[str, Any], message: str) -> None:
    """Each bad value is one line naming the model and the setting; nothing changes, not
    even the good values given with it."""
    model = build(VISCOPLASTIC.read_text())
    before = model.solver_settings
    given = {"abs_tol": 1e-3, **values} if "abs_tol" not in values else values
    with pytest.raises(Neml2Error) as info:
        model.set_solver_settings(solver, **given)
    assert str(info.value) == f"model 'model': {message}"
    assert "\n" not in str(info.value)
    assert model.solver_settings == before


def test_zero_tolerances_and_large_caps_are_allowed() -> None:
    model = build(VISCOPLASTIC.read_text())
    model.set_solver_settings("newton", abs_tol=0, rel_tol=0.0, max_its=2**63 - 1)
    assert model.solver_settings["newton"] == {
        "abs_tol": 0.0,
        "rel_tol": 0.0,
        "max_its": 2**63 - 1,
    }
    assert isinstance(model.solver_settings["newton"]["abs_tol"], float)


# --- the meta's settings as the loaders check them ------------------------------------


def written_meta(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """The meta of the viscoplastic fixture (forward, -p sy), with empty graph files."""
    model = build(VISCOPLASTIC.read_text())
    meta = build_meta(model, CPU, Selection([], select_params(model, ["sy"])))
    for spec in meta["graphs"].values():
        (tmp_path / spec["file"]).write_bytes(b"")
    return tmp_path / "model_meta.json", json.loads(json.dumps(meta))


def test_the_written_meta_passes_the_checks(tmp_path: Path) -> None:
    path, meta = written_meta(tmp_path)
    validate.check_meta(path, meta)
    args = validate.probe_args(meta, "forward", {"model.sy": torch.tensor(100.0, dtype=F64)}, CPU)
    assert [a.dtype for a in args[-3:]] == [F64, F64, torch.int64]
    assert all(a.shape == () for a in args[-3:])
    assert [a.item() for a in args[-3:]] == [1e-10, 1e-10, 8]


def test_an_older_meta_without_settings_has_none(tmp_path: Path) -> None:
    """An artifact written before settings: no key, no setting args."""
    path, meta = written_meta(tmp_path)
    del meta["settings"]
    for spec in meta["graphs"].values():
        spec["args"] = [a for a in spec["args"] if a["role"] != "setting"]
    validate.check_meta(path, meta)
    args = validate.probe_args(meta, "forward", {"model.sy": torch.tensor(1.0, dtype=F64)}, CPU)
    assert len(args) == 5  # the four inputs and sy


def drop(meta: dict[str, Any], index: int) -> None:
    del meta["settings"][index]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda m: m["settings"][1].update(dtype="float32"),
            "field 'settings[1].dtype' is 'float32', expected 'float64'",
        ),
        (
            lambda m: m["settings"][2].update(dtype="float64"),
            "field 'settings[2].dtype' is 'float64', expected 'int64'",
        ),
        (
            lambda m: m["settings"][2].update(value=0),
            "field 'settings[2].value' must be an integer >= 1, got 0",
        ),
        (
            lambda m: m["settings"][2].update(value=2.5),
            "field 'settings[2].value' must be an integer",
        ),
        (
            lambda m: m["settings"][0].update(value=-1e-3),
            "field 'settings[0].value' must be a finite number >= 0, got -0.001",
        ),
        (
            lambda m: m["settings"][0].update(value="1e-10"),
            "field 'settings[0].value' must be a number, found a string",
        ),
        (
            lambda m: m["settings"].reverse(),
            "field 'settings[0].name' is 'newton.max_its', expected 'newton.abs_tol'",
        ),
        (
            lambda m: m["settings"][1].update(name="other.rel_tol"),
            "field 'settings[1].name' is 'other.rel_tol', expected 'newton.rel_tol'",
        ),
        (
            lambda m: m["settings"][0].update(name="abs_tol"),
            "field 'settings[0].name' is 'abs_tol', expected '<solver>.abs_tol'",
        ),
        (
            lambda m: m.update(settings=m["settings"] * 2),
            "duplicate name 'newton.abs_tol' in 'settings'",
        ),
        (lambda m: drop(m, 2), "field 'settings' ends in 'newton.rel_tol'"),
        (lambda m: m.update(settings={}), "field 'settings' must be an array, found an object"),
        (
            lambda m: m["graphs"]["forward"]["args"].pop(),
            "graphs.forward.args takes the settings [newton.abs_tol, newton.rel_tol], "
            "expected every entry of 'settings' in its order",
        ),
        (
            lambda m: m["graphs"]["forward"]["args"][-1].update(name="newton.maxits"),
            "graphs.forward.args names 'newton.maxits', which is not a variable of that role",
        ),
        (
            lambda m: m.pop("settings"),
            "graphs.forward.args names 'newton.abs_tol', which is not a variable of that role",
        ),
    ],
)
def test_a_damaged_settings_list_is_refused(tmp_path: Path, edit: Any, message: str) -> None:
    path, meta = written_meta(tmp_path)
    edit(meta)
    with pytest.raises(ArtifactError) as info:
        validate.check_meta(path, meta)
    assert message in str(info.value)
