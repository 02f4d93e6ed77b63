"""LinearIsotropicElasticity against hand-computed values, and its input-file errors."""

from __future__ import annotations

import itertools

import pytest
import torch

from neml2 import hit
from neml2.errors import HitError, Neml2Error
from neml2.models import LinearIsotropicElasticity, Model, build_model
from neml2.models.elasticity import COEFFICIENT_SYMBOLS

from .conftest import FIXTURES

F64 = torch.float64


def make(coefficients: str, types: str, extra: str = "") -> Model:
    text = (
        "[Models]\n  [model]\n    type = LinearIsotropicElasticity\n"
        f"    coefficients = '{coefficients}'\n    coefficient_types = '{types}'\n{extra}  []\n[]\n"
    )
    return build_model(hit.parse(text, "m.i").children["Models"].children["model"])


def test_forward_single_fixture_builds_the_spec_model() -> None:
    root = hit.load(FIXTURES / "forward_single" / "model.i")
    model = build_model(root.children["Models"].children["model"])
    assert isinstance(model, LinearIsotropicElasticity)
    assert [v.name for v in model.inputs] == ["strain"]
    assert [v.name for v in model.outputs] == ["stress"]
    params = model.named_parameters()
    assert list(params) == ["model.E", "model.nu"]
    assert params["model.E"].item() == 100.0
    assert params["model.nu"].item() == 0.3
    assert params["model.E"].dtype == F64
    assert params["model.E"].shape == ()


def test_stress_by_hand() -> None:
    # E = 100, nu = 0.3: 2G = 100/1.3 = 76.923077, lambda = 30/0.52 = 57.692308
    model = make("100 0.3", "YOUNGS_MODULUS POISSONS_RATIO")
    strain = torch.tensor([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]], dtype=F64) * 1e-3
    stress = model.forward({"strain": strain})["stress"]
    expected = torch.tensor(
        [[0.42307692, 0.5, 0.57692308, 0.30769231, 0.38461538, 0.46153846]], dtype=F64
    )
    torch.testing.assert_close(stress, expected, rtol=1e-7, atol=0)


def test_jacobian_by_hand() -> None:
    model = make("100 0.3", "YOUNGS_MODULUS POISSONS_RATIO")
    jac = model.jacobian({"strain": torch.zeros(5, 6, dtype=F64)})["stress"]["strain"]
    assert jac.shape == (6, 6)  # batch-independent: returned unbatched
    two_g, lam = 100 / 1.3, 30 / 0.52
    expected = torch.diag(torch.tensor([two_g] * 6, dtype=F64))
    expected[:3, :3] += lam
    torch.testing.assert_close(jac, expected)


def reference_constants(E: float, nu: float) -> dict[str, float]:
    return {
        "E": E,
        "nu": nu,
        "K": E / (3 * (1 - 2 * nu)),
        "G": E / (2 * (1 + nu)),
        "lambda": E * nu / ((1 + nu) * (1 - 2 * nu)),
    }


PAIRS = list(itertools.combinations(COEFFICIENT_SYMBOLS, 2))


@pytest.mark.parametrize(("first", "second"), PAIRS + [(b, a) for a, b in PAIRS[:3]])
def test_every_coefficient_pair_gives_the_same_model(first: str, second: str) -> None:
    ref = reference_constants(200.0, 0.3)
    a, b = ref[COEFFICIENT_SYMBOLS[first]], ref[COEFFICIENT_SYMBOLS[second]]
    model = make(f"{a!r} {b!r}", f"{first} {second}")
    reference = make("200 0.3", "YOUNGS_MODULUS POISSONS_RATIO")
    assert list(model.named_parameters()) == [
        f"model.{COEFFICIENT_SYMBOLS[first]}",
        f"model.{COEFFICIENT_SYMBOLS[second]}",
    ]
    strain = torch.rand(4, 6, dtype=F64)
    torch.testing.assert_close(
        model.forward({"strain": strain}), reference.forward({"strain": strain})
    )


def test_variable_names_come_from_the_block() -> None:
    model = make("1 0.2", "YOUNGS_MODULUS POISSONS_RATIO", "    strain = 'eps'\n    stress = sig\n")
    out = model.forward({"eps": torch.zeros(2, 6, dtype=F64)})
    assert list(out) == ["sig"]


def test_batch_of_zero() -> None:
    model = make("1 0.2", "YOUNGS_MODULUS POISSONS_RATIO")
    empty = torch.zeros(0, 6, dtype=F64)
    assert model.forward({"strain": empty})["stress"].shape == (0, 6)
    pjac = model.param_jacobian({"strain": empty})["stress"]
    assert pjac["model.E"].shape == (0, 6)
    adj = model.param_vjp({"strain": empty}, {"stress": empty})
    assert adj["model.E"].shape == ()
    assert adj["model.E"].item() == 0.0


def test_changed_parameter_changes_the_next_call() -> None:
    model = make("100 0.3", "YOUNGS_MODULUS POISSONS_RATIO")
    strain = torch.rand(3, 6, dtype=F64)
    before = model.forward({"strain": strain})["stress"]
    model.named_parameters()["model.E"].fill_(200.0)
    torch.testing.assert_close(model.forward({"strain": strain})["stress"], 2 * before)


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({}, "model 'model': missing input 'strain'"),
        (
            {"strain": torch.zeros(5, dtype=F64)},
            "input 'strain' has shape (5,), expected (6,) or (B, 6)",
        ),
        ({"strain": torch.zeros(2, 3, dtype=F64)}, "has shape (2, 3), expected (6,) or (B, 6)"),
        ({"strain": [0.0] * 6}, "input 'strain' is not a tensor"),
    ],
)
def test_bad_inputs(inputs: dict, message: str) -> None:
    model = make("100 0.3", "YOUNGS_MODULUS POISSONS_RATIO")
    with pytest.raises(Neml2Error) as info:
        model.forward(inputs)
    assert message in str(info.value)


def test_unbatched_inputs_give_unbatched_results() -> None:
    """As in the C++ runtime: (*shape) next to (B, *shape) goes to every point."""
    model = make("100 0.3", "YOUNGS_MODULUS POISSONS_RATIO")
    strain = torch.rand(6, dtype=F64)
    batch = strain.expand(4, 6)
    stress = model.forward({"strain": strain})["stress"]
    assert stress.shape == (6,)
    torch.testing.assert_close(stress, model.forward({"strain": batch})["stress"][0])
    tangent = model.jvp({"strain": batch}, {"strain": strain})["stress"]
    assert tangent.shape == (4, 6)
    assert model.param_jacobian({"strain": strain})["stress"]["model.E"].shape == (6,)
    with pytest.raises(Neml2Error, match=r"batch sizes disagree: tangent 'strain' has 3 but"):
        model.jvp({"strain": batch}, {"strain": torch.rand(3, 6, dtype=F64)})


def test_tangents_must_match_the_batch() -> None:
    model = make("100 0.3", "YOUNGS_MODULUS POISSONS_RATIO")
    x = {"strain": torch.zeros(2, 6, dtype=F64)}
    with pytest.raises(Neml2Error, match=r"unknown tangent 'stress' \(expected inputs: strain\)"):
        model.jvp(x, {"stress": torch.zeros(2, 6, dtype=F64)})
    with pytest.raises(Neml2Error, match="cotangent 'stress' has shape"):
        model.param_vjp(x, {"stress": torch.zeros(3, 5, dtype=F64)})


@pytest.mark.parametrize(
    ("body", "line", "message"),
    [
        ("    type = Elastic\n", 4, "[Models/model]: unknown model type 'Elastic'; known types: "),
        (
            "    type = LinearIsotropicElasticity\n"
            "    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'\n",
            3,
            "[Models/model]: missing required parameter 'coefficients'",
        ),
        (
            "    type = LinearIsotropicElasticity\n    coefficients = '1e5 O.3'\n"
            "    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'\n",
            5,
            "parameter 'coefficients': expected a number, got 'O.3'",
        ),
        (
            "    type = LinearIsotropicElasticity\n    coefficients = '1 2'\n"
            "    coefficient_types = 'YOUNGS_MODULUS POISON'\n",
            6,
            "unknown coefficient type 'POISON'; expected two of: YOUNGS_MODULUS, POISSONS_RATIO,",
        ),
        (
            "    type = LinearIsotropicElasticity\n    coefficients = '1 2 3'\n"
            "    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'\n",
            5,
            "parameter 'coefficients': expected 2 values, got 3",
        ),
        (
            "    type = LinearIsotropicElasticity\n    coefficients = '1 2'\n"
            "    coefficient_types = 'YOUNGS_MODULUS'\n",
            6,
            "parameter 'coefficient_types': expected 2 values, got 1",
        ),
        (
            "    type = LinearIsotropicElasticity\n    coefficients = '1 2'\n"
            "    coefficient_types = 'SHEAR_MODULUS SHEAR_MODULUS'\n",
            6,
            "'SHEAR_MODULUS' is given twice",
        ),
        (
            "    type = LinearIsotropicElasticity\n    coefficients = '1 2'\n"
            "    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'\n    youngs = 3\n",
            7,
            "unknown parameter 'youngs' for LinearIsotropicElasticity; expected one of: ",
        ),
        (
            "    type = LinearIsotropicElasticity\n    coefficients = '1 2'\n"
            "    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'\n    stress = strain\n",
            7,
            "the output must differ from the input 'strain'",
        ),
    ],
)
def test_input_file_errors(body: str, line: int, message: str) -> None:
    # line 1 a comment, 2 [Models], 3 [model], 4... the body
    text = f"# header\n[Models]\n  [model]\n{body}  []\n[]\n"
    section = hit.parse(text, "e.i").children["Models"].children["model"]
    with pytest.raises(HitError) as info:
        build_model(section)
    assert message in info.value.message
    assert str(info.value) == f"e.i:{line}: {info.value.message}"
    assert info.value.line == line
