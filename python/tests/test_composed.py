"""ThermalEigenstrain, the linear combinations and ComposedModel: closed-form values,
finite-difference derivatives through the chain rule, and every input-file error."""

from __future__ import annotations

import pytest
import torch

from neml2 import hit, load_model
from neml2.errors import ConvergenceError, HitError
from neml2.models import (
    ComposedModel,
    Model,
    ScalarLinearCombination,
    SR2LinearCombination,
    ThermalEigenstrain,
    build_model,
)

from .conftest import FIXTURES
from .oracle import parameter_differences
from .test_viscoplasticity import DT_FAIL, STRAIN_FAIL, assert_relative

F64 = torch.float64
THERMOELASTIC = FIXTURES / "thermoelastic" / "model.i"
E, NU, ALPHA, T0 = 200000.0, 0.3, 1.2e-5, 293.15
NORMAL = torch.tensor([1.0, 1.0, 1.0, 0.0, 0.0, 0.0], dtype=F64)


def models(text: str, name: str = "model") -> Model:
    root = hit.parse(f"[Models]\n{text}[]\n", "c.i")
    return build_model(root.children["Models"].children[name])


def stiffness(E: float = E, nu: float = NU) -> torch.Tensor:
    G = E / (2 * (1 + nu))
    lam = E * nu / ((1 + nu) * (1 - 2 * nu))
    return 2 * G * torch.eye(6, dtype=F64) + lam * torch.outer(NORMAL, NORMAL)


def inputs(n: int = 5, seed: int = 0) -> dict[str, torch.Tensor]:
    torch.manual_seed(seed)
    return {
        "strain": torch.randn(n, 6, dtype=F64) * 1e-3,
        "temperature": 273 + 400 * torch.rand(n, dtype=F64),
    }


# --- leaf models ---------------------------------------------------------------------


def test_thermal_eigenstrain_closed_form() -> None:
    model = models(
        "  [model]\n    type = ThermalEigenstrain\n    alpha = 2e-5\n    T0 = 300\n  []\n"
    )
    assert isinstance(model, ThermalEigenstrain)
    assert [v.name for v in model.inputs] == ["temperature"]
    assert [(v.name, v.shape) for v in model.outputs] == [("thermal_strain", (6,))]
    T = torch.tensor([300.0, 400.0, 250.0], dtype=F64)
    out = model.forward({"temperature": T})["thermal_strain"]
    torch.testing.assert_close(out, (2e-5 * (T - 300)).unsqueeze(-1) * NORMAL)
    jac = model.jacobian({"temperature": T})["thermal_strain"]["temperature"]
    torch.testing.assert_close(jac, 2e-5 * NORMAL)  # unbatched: the same for every point
    pjac = model.param_jacobian({"temperature": T})["thermal_strain"]
    torch.testing.assert_close(pjac["model.alpha"], (T - 300).unsqueeze(-1) * NORMAL)
    torch.testing.assert_close(pjac["model.T0"], -2e-5 * NORMAL)
    adj = model.param_vjp({"temperature": T}, {"thermal_strain": torch.ones(3, 6, dtype=F64)})
    assert adj["model.alpha"].item() == pytest.approx(3 * (0 + 100 - 50))
    assert adj["model.T0"].item() == pytest.approx(-3 * 3 * 2e-5)


def test_linear_combinations() -> None:
    sr2 = models(
        "  [model]\n    type = SR2LinearCombination\n    from = 'a b'\n    to = c\n"
        "    coefficients = '2 -0.5'\n  []\n"
    )
    assert isinstance(sr2, SR2LinearCombination)
    a, b = torch.rand(4, 6, dtype=F64), torch.rand(4, 6, dtype=F64)
    torch.testing.assert_close(sr2.forward({"a": a, "b": b})["c"], 2 * a - 0.5 * b)
    jac = sr2.jacobian({"a": a, "b": b})["c"]
    torch.testing.assert_close(jac["b"], -0.5 * torch.eye(6, dtype=F64))
    assert sr2.named_parameters() == {}
    scalar = models(
        "  [model]\n    type = ScalarLinearCombination\n    from = 'x y'\n    to = z\n  []\n"
    )
    assert isinstance(scalar, ScalarLinearCombination)
    x, y = torch.rand(3, dtype=F64), torch.rand(3, dtype=F64)
    torch.testing.assert_close(scalar.forward({"x": x, "y": y})["z"], x + y)
    assert scalar.jacobian({"x": x, "y": y})["z"]["x"].shape == ()


# --- thermo-elasticity by composition ------------------------------------------------


def test_thermoelastic_fixture_closed_form() -> None:
    model = load_model(THERMOELASTIC, "model")
    assert isinstance(model, ComposedModel)
    assert not model.implicit
    assert [(v.name, v.shape) for v in model.inputs] == [("temperature", ()), ("strain", (6,))]
    assert [v.name for v in model.outputs] == ["stress"]
    assert list(model.named_parameters()) == [
        "thermal.alpha",
        "thermal.T0",
        "elastic.E",
        "elastic.nu",
    ]
    x = inputs()
    C = stiffness()
    mechanical = x["strain"] - (ALPHA * (x["temperature"] - T0)).unsqueeze(-1) * NORMAL
    want = (C * mechanical.unsqueeze(1)).sum(-1)
    torch.testing.assert_close(model.forward(x)["stress"], want, rtol=1e-13, atol=1e-10)

    jac = model.jacobian(x)["stress"]
    torch.testing.assert_close(jac["strain"], C)  # batch-independent, returned once
    torch.testing.assert_close(jac["temperature"], -ALPHA * (C * NORMAL).sum(-1))
    pjac = model.param_jacobian(x)["stress"]
    assert pjac["thermal.T0"].shape == (6,)
    torch.testing.assert_close(pjac["thermal.T0"], ALPHA * (C * NORMAL).sum(-1))
    three_k = E / (1 - 2 * NU)
    torch.testing.assert_close(
        pjac["thermal.alpha"], -three_k * (x["temperature"] - T0).unsqueeze(-1) * NORMAL
    )


def fd(model: Model, x: dict[str, torch.Tensor], out: str, name: str) -> torch.Tensor:
    """d(out)/d(name) by central differences, name an input (a scalar one) or a parameter."""
    if name in x:
        h = 1e-6 * x[name].abs().max().item()
        plus = model.forward({**x, name: x[name] + h})[out]
        minus = model.forward({**x, name: x[name] - h})[out]
        return (plus - minus) / (2 * h)
    return parameter_differences(model, x, name)[out]


def fd_strain(model: Model, x: dict[str, torch.Tensor], j: int) -> torch.Tensor:
    """d(stress)/d(strain_j) by central differences."""
    h = 1e-9
    step = torch.zeros_like(x["strain"])
    step[:, j] = h
    plus = model.forward({**x, "strain": x["strain"] + step})["stress"]
    minus = model.forward({**x, "strain": x["strain"] - step})["stress"]
    return (plus - minus) / (2 * h)


def test_thermoelastic_derivatives_by_finite_differences() -> None:
    model = load_model(THERMOELASTIC, "model")
    x = inputs(4, seed=1)
    jac = model.jacobian(x)["stress"]["temperature"]
    assert_relative(jac.expand(4, 6), fd(model, x, "stress", "temperature"), 1e-7)
    pjac = model.param_jacobian(x)["stress"]
    for name in model.named_parameters():
        assert_relative(pjac[name].expand(4, 6), fd(model, x, "stress", name), 1e-6)
    cot = {"stress": torch.randn(4, 6, dtype=F64)}
    adj = model.param_vjp(x, cot)
    for name in model.named_parameters():
        assert_relative(adj[name], (cot["stress"] * fd(model, x, "stress", name)).sum(), 1e-6)
    v = {"temperature": torch.rand(4, dtype=F64), "strain": torch.rand(4, 6, dtype=F64)}
    h = 1e-3
    plus = model.forward({k: x[k] + h * v[k] for k in x})["stress"]
    minus = model.forward({k: x[k] - h * v[k] for k in x})["stress"]
    assert_relative(model.jvp(x, v)["stress"], (plus - minus) / (2 * h), 1e-9)


def test_order_of_the_list_does_not_matter_and_outputs_can_be_chosen() -> None:
    text = THERMOELASTIC.read_text().replace(
        "models = 'thermal mechanical elastic'",
        "models = 'elastic mechanical thermal'\n    outputs = 'stress mechanical_strain'",
    )
    root = hit.parse(text, "t.i")
    model = build_model(root.children["Models"].children["model"])
    assert isinstance(model, ComposedModel)
    assert [m.name for m in model.models] == ["thermal", "mechanical", "elastic"]
    assert [v.name for v in model.outputs] == ["stress", "mechanical_strain"]
    x = inputs(3)
    out = model.forward(x)
    torch.testing.assert_close(
        out["stress"], load_model(THERMOELASTIC, "model").forward(x)["stress"]
    )
    jac = model.jacobian(x)
    torch.testing.assert_close(jac["mechanical_strain"]["strain"], torch.eye(6, dtype=F64))
    assert not model.jacobian_batched("mechanical_strain", "temperature")


# --- composition with an implicit model ----------------------------------------------

THERMO_VISCOPLASTIC = """\
  [thermal]
    type = ThermalEigenstrain
    alpha = 1e-5
    T0 = 300
  []
  [mechanical]
    type = SR2LinearCombination
    from = 'strain thermal_strain'
    to = 'mechanical_strain'
    coefficients = '1 -1'
  []
  [plastic]
    type = J2Viscoplasticity
    strain = mechanical_strain
    E = 200000
    nu = 0.3
    sy = 100
    Q = 50
    b = 20
    eta = 150
    n = 4
    solver = newton
  []
  [model]
    type = ComposedModel
    models = 'thermal mechanical plastic'
  []
"""


def thermo_viscoplastic(max_its: int) -> Model:
    text = (
        "[Solvers]\n  [newton]\n    type = Newton\n    abs_tol = 1e-12\n    rel_tol = 1e-13\n"
        f"    max_its = {max_its}\n  []\n[]\n[Models]\n{THERMO_VISCOPLASTIC}[]\n"
    )
    return build_model(hit.parse(text, "tvp.i").children["Models"].children["model"])


def test_an_implicit_model_inside_a_composition() -> None:
    model = thermo_viscoplastic(60)
    assert model.implicit
    assert [v.name for v in model.inputs] == [
        "temperature",
        "strain",
        "old_plastic_strain",
        "old_equivalent_plastic_strain",
        "time_step",
    ]
    assert [v.name for v in model.outputs] == [
        "stress",
        "plastic_strain",
        "equivalent_plastic_strain",
    ]
    torch.manual_seed(6)
    n = 6
    x = {
        "temperature": 300 + 200 * torch.rand(n, dtype=F64),
        "strain": torch.randn(n, 6, dtype=F64) * 3e-3,
        "old_plastic_strain": torch.zeros(n, 6, dtype=F64),
        "old_equivalent_plastic_strain": torch.zeros(n, dtype=F64),
        "time_step": torch.rand(n, dtype=F64) + 0.1,
    }
    jac = model.jacobian(x)
    assert_relative(jac["stress"]["temperature"], fd(model, x, "stress", "temperature"), 1e-6)
    # J2 flow does not see the volumetric thermal strain
    assert jac["equivalent_plastic_strain"]["temperature"].abs().max() < 1e-18
    assert_relative(jac["stress"]["strain"][:, :, 0], fd_strain(model, x, 0), 1e-6)
    pjac = model.param_jacobian(x)
    for name in ("thermal.alpha", "plastic.sy", "plastic.E"):
        assert_relative(pjac["stress"][name], fd(model, x, "stress", name), 1e-6)

    # a point that does not converge is reported through the composition
    few = thermo_viscoplastic(8)
    x["strain"][0] = torch.tensor([STRAIN_FAIL, 0, 0, 0, 0, 0], dtype=F64)
    x["temperature"][0] = 300.0
    x["time_step"][0] = DT_FAIL
    ev = few.evaluate(x, few.named_parameters())
    assert ev.status is not None
    assert ev.status.converged.tolist() == [False] + [True] * (n - 1)
    with pytest.raises(ConvergenceError, match=r"model 'model': 1 of 6 points did not converge"):
        few.forward(x)


def test_the_composed_j2_model_has_the_monolithic_parameter_adjoints() -> None:
    """tests/aoti/j2_composed (NEML2's blocks around an ImplicitUpdate) and
    tests/aoti/viscoplastic (J2Viscoplasticity) with the same constants: the adjoints of the
    parameters both have agree (the compiled j2_composed leaves param_vjp out)."""
    composed = load_model(FIXTURES / "j2_composed" / "model.i", "model")
    mono = load_model(FIXTURES / "viscoplastic" / "model.i", "model")
    g = torch.Generator().manual_seed(11)
    n = 30
    t_old = torch.rand(n, generator=g, dtype=F64)
    x = {
        "strain": torch.randn(n, 6, generator=g, dtype=F64) * 2e-3,
        "plastic_strain~1": torch.zeros(n, 6, dtype=F64),
        "equivalent_plastic_strain~1": torch.rand(n, generator=g, dtype=F64) * 0.01,
        "t~1": t_old,
        "t": t_old + torch.rand(n, generator=g, dtype=F64) * 0.9 + 0.1,
    }
    y = {
        "strain": x["strain"],
        "old_plastic_strain": x["plastic_strain~1"],
        "old_equivalent_plastic_strain": x["equivalent_plastic_strain~1"],
        "time_step": x["t"] - x["t~1"],
    }
    # every point yields
    assert bool(
        (composed.forward(x)["equivalent_plastic_strain"] > x["equivalent_plastic_strain~1"]).all()
    )
    a = composed.param_vjp(x, {"stress": x["strain"]})
    a0 = mono.param_vjp(y, {"stress": x["strain"]})
    assert_relative(a["yield_function.yield_stress"], a0["model.sy"], 1e-7)
    # reference_stress = sqrt(2/3) eta (NEML2's yield function is sqrt(2/3) (vm - sy - R))
    assert_relative(a["flow_rate.reference_stress"], 1.5**0.5 * a0["model.eta"], 1e-7)
    assert_relative(a["isoharden.saturated_hardening"], a0["model.Q"], 1e-7)


# --- input-file errors ----------------------------------------------------------------

LEAVES = """\
  [a]
    type = SR2LinearCombination
    from = 'x'
    to = 'y'
  []
  [b]
    type = SR2LinearCombination
    from = 'y'
    to = 'x'
  []
  [s]
    type = ScalarLinearCombination
    from = 'p'
    to = 'y'
  []
  [stub]
    type = AOTIModel
    artifact_path = 'stub'
  []
"""


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("models = ''", "parameter 'models': expected at least one model name"),
        ("models = 'a a'", "parameter 'models': 'a' is listed twice"),
        ("models = 'a model'", "parameter 'models': 'model' is this model itself"),
        ("models = 'a nope'", "parameter 'models': no model 'nope' in [Models]; models defined: "),
        ("models = 'stub'", "'stub' is a compiled model (AOTIModel); compose the source models"),
        ("models = 'a s'", "variable 'y' is an output of both 'a' and 's'"),
        ("models = 'a b'", "the outputs and inputs of a, b depend on each other in a cycle"),
        (
            "models = 'a'\n    outputs = 'z'",
            "parameter 'outputs': 'z' is not an output of any of a",
        ),
        ("models = 'a'\n    colour = red", "unknown parameter 'colour' for ComposedModel"),
    ],
)
def test_composition_errors(body: str, message: str) -> None:
    text = f"{LEAVES}  [model]\n    type = ComposedModel\n    {body}\n  []\n"
    with pytest.raises(HitError) as info:
        models(text)
    assert message in info.value.message
    assert str(info.value).startswith(f"c.i:{info.value.line}: ")
    assert info.value.line > 20  # at the composed block's line, not elsewhere


def test_shapes_must_agree() -> None:
    text = (
        "  [t]\n    type = ThermalEigenstrain\n    alpha = 1\n    T0 = 0\n  []\n"
        "  [s]\n    type = ScalarLinearCombination\n    from = 'thermal_strain'\n"
        "    to = 'q'\n  []\n"
        "  [model]\n    type = ComposedModel\n    models = 't s'\n  []\n"
    )
    with pytest.raises(HitError, match=r"variable 'thermal_strain' has shape \(6,\) as an output"):
        models(text)


def test_models_that_include_each_other() -> None:
    text = (
        "  [one]\n    type = ComposedModel\n    models = 'two'\n  []\n"
        "  [two]\n    type = ComposedModel\n    models = 'one'\n  []\n"
    )
    with pytest.raises(HitError) as info:
        models(text, "one")
    assert "models include each other: Models/one -> Models/two -> Models/one" in info.value.message
    assert ComposedModel._building == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("    type = ThermalEigenstrain\n    alpha = 1\n", "missing required parameter 'T0'"),
        (
            "    type = ThermalEigenstrain\n    alpha = 1\n    T0 = 0\n"
            "    eigenstrain = temperature\n",
            "the output must differ from the input 'temperature'",
        ),
        ("    type = SR2LinearCombination\n    from = 'a b'\n    to = a\n", "'a' is also an input"),
        (
            "    type = SR2LinearCombination\n    from = 'a b'\n    to = c\n    coefficients = 1\n",
            "parameter 'coefficients': expected 2 values, got 1",
        ),
        ("    type = SR2LinearCombination\n    from = 'a a'\n    to = c\n", "'a' is listed twice"),
    ],
)
def test_leaf_errors(text: str, message: str) -> None:
    with pytest.raises(HitError) as info:
        models(f"  [model]\n{text}  []\n")
    assert message in info.value.message
