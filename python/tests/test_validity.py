"""Issue 31, items 4 and 5: parameter values refused at build where NEML2 3.1.0 computes
nothing meaningful with them, and the eager model's argument checks, which are the
compiled model's (same checks, same messages).

What NEML2 3.1.0 does with each case was asked of it (``neml2.load_model`` and
``call_by_name`` at the strain ``(1, 2, 3, 0, 0, 0) 1e-3``); :func:`test_neml2_still_does`
asks again where its environment is installed (NEML2_ORACLE_PYTHON or .venv-neml2).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import torch

import neml2
from neml2 import hit
from neml2.errors import HitError, Neml2Error
from neml2.models import Model, build_model

from .conftest import FIXTURES
from .test_neml2_oracle import ORACLE, oracle_env, oracle_python

F64 = torch.float64
EN = "YOUNGS_MODULUS POISSONS_RATIO"
KG = "BULK_MODULUS SHEAR_MODULUS"
GEN = f"SHEAR_MODULUS {EN}"
STRAIN = torch.tensor([1e-3, 2e-3, 3e-3, 0.0, 0.0, 0.0], dtype=F64)
#: The source of the compiled fixture (loadable_elastic): E = 1e5, nu = 0.25.
SOURCE = FIXTURES / "elastic_promoted" / "model.i"


def text(type_name: str, coefficients: str, types: str, extra: str = "") -> str:
    return (
        f"[Models]\n  [model]\n    type = {type_name}\n"
        f"    coefficients = '{coefficients}'\n    coefficient_types = '{types}'\n"
        f"{extra}  []\n[]\n"
    )


def build(source: str) -> Model:
    return build_model(hit.parse(source, "m.i").children["Models"].children["model"])


def evaluate(model: Model) -> torch.Tensor:
    """The model's one output at STRAIN (an elasticity tensor model has no input)."""
    (out,) = model.forward({v.name: STRAIN for v in model.inputs}).values()
    return out


# --- item 4: a number that is not finite ------------------------------------------------

#: (type, coefficients, types, the word refused, what NEML2 3.1.0 computes with it).
#: NEML2 reads 1e400 as inf and computes NaN and inf with it (stress
#: [nan, nan, inf, nan, nan, nan] for E = 1e400, nu = 0.3), or with nu = -inf the zero
#: stress of the limit G -> 0, lambda -> 0: nothing a material has. Refused here.
OVERFLOW = [
    ("LinearIsotropicElasticity", "1e400 0.3", EN, "1e400", "non-finite"),
    ("LinearIsotropicElasticity", "100 -1e400", EN, "-1e400", "zero"),
    ("IsotropicElasticityTensor", "1e400 0.3", EN, "1e400", "non-finite"),
    ("IsotropicElasticityTensor", "1 1e999", KG, "1e999", "non-finite"),
    ("CubicElasticityTensor", "1 1e400 0.3", GEN, "1e400", "non-finite"),
]


@pytest.mark.parametrize(("type_name", "coefficients", "types", "word", "neml2"), OVERFLOW)
def test_overflowing_coefficient_is_refused(
    type_name: str, coefficients: str, types: str, word: str, neml2: str
) -> None:
    message = f"parameter 'coefficients': '{word}' is not a finite number"
    with pytest.raises(HitError, match=re.escape(message)) as err:
        build(text(type_name, coefficients, types))
    assert err.value.line == 4  # the line of coefficients
    assert "1.798e+308" in str(err.value)  # the range of a float64


def test_overflowing_number_in_a_tensor_option_is_refused() -> None:
    stiffness = " ".join(["1e400"] + ["0"] * 35)
    source = (
        "[Models]\n  [model]\n    type = GeneralElasticity\n"
        f"    elastic_stiffness_tensor = '{stiffness}'\n  []\n[]\n"
    )
    with pytest.raises(HitError, match="'elastic_stiffness_tensor': '1e400' is not a finite"):
        build(source)


def test_overflowing_number_option_is_refused() -> None:
    root = hit.parse("[A]\n  x = 2.5\n  y = -3e308\n  z = 1.5e308\n[]\n", "a.i")
    block = root.children["A"]
    assert block.number("x") == 2.5
    assert block.number("z") == 1.5e308  # large but finite
    with pytest.raises(HitError, match=r"a\.i:3: parameter 'y': '-3e308' is not a finite"):
        block.number("y")


def test_overflow_refused_through_load_model(tmp_path: Path) -> None:
    path = tmp_path / "big.i"
    path.write_text(SOURCE.read_text().replace("100000 0.25", "1e400 0.25"))
    with pytest.raises(HitError, match=r"big\.i:\d+: parameter 'coefficients': '1e400'"):
        neml2.load_model(path, "model")


# --- item 4: elastic constants at a singular point of their parametrisation ---------------

COMPLIANCE = "    compliance = true\n"
#: (type, coefficients, types, extra options, where the message says it is singular).
#: NEML2 3.1.0 builds each and computes inf or NaN with it (stress
#: [inf, inf, inf, nan, nan, nan] for E = 100, nu = 0.5): refused here.
SINGULAR = [
    ("LinearIsotropicElasticity", "100 0.5", EN, "", "nu = 0.5 or nu = -1"),
    ("LinearIsotropicElasticity", "100 -1", EN, "", "nu = 0.5 or nu = -1"),
    (
        "LinearIsotropicElasticity",
        "0 0.3",
        EN,
        COMPLIANCE,
        "nu = 0.5 or nu = -1 or G = 0 or K = 0 (compliance form)",
    ),
    ("IsotropicElasticityTensor", "100 0.5", EN, "", "nu = 0.5 or nu = -1"),
    ("IsotropicElasticityTensor", "0.5 1", "POISSONS_RATIO SHEAR_MODULUS", "", "nu = 0.5"),
    ("IsotropicElasticityTensor", "9 1", "YOUNGS_MODULUS BULK_MODULUS", "", "E = 9 K"),
    ("IsotropicElasticityTensor", "3 1", "YOUNGS_MODULUS SHEAR_MODULUS", "", "E = 3 G"),
    ("IsotropicElasticityTensor", "0 1", "POISSONS_RATIO LAME_LAMBDA", "", "nu = 0"),
    ("CubicElasticityTensor", "1 100 0.5", GEN, "", "nu = 0.5 or nu = -1"),
]


@pytest.mark.parametrize(("type_name", "coefficients", "types", "extra", "where"), SINGULAR)
def test_singular_elastic_constants_are_refused(
    type_name: str, coefficients: str, types: str, extra: str, where: str
) -> None:
    with pytest.raises(HitError, match="give an infinite or undefined elasticity tensor") as err:
        build(text(type_name, coefficients, types, extra))
    message = str(err.value)
    assert message.startswith("m.i:4: [Models/model]: coefficients ")
    assert f"singular where {where}" in message
    assert "the physical range is E > 0, G > 0, K > 0, -1 < nu < 0.5" in message


def test_near_singular_elastic_constants_are_accepted() -> None:
    out = evaluate(build(text("LinearIsotropicElasticity", "100 0.4999", EN)))
    assert bool(torch.isfinite(out).all())
    assert out[0] > 1e2  # lambda = 1e2 * 0.4999 / (1.4999 * 2e-4), near-incompressible


# --- item 4: values NEML2 3.1.0 accepts: accepted, and computed as NEML2 does -------------

#: (type, coefficients, types, NEML2 3.1.0's first three output components at STRAIN
#: (row 0 of the tensor for the tensor models)). Outside the physical range, but finite.
ACCEPTED = [
    ("LinearIsotropicElasticity", "100 0.6", EN, [-1.0625, -1.0, -0.9375]),
    ("LinearIsotropicElasticity", "100 -1.5", EN, [0.25, 0.05, -0.15]),
    ("LinearIsotropicElasticity", "0 0.3", EN, [0.0, 0.0, 0.0]),
    ("LinearIsotropicElasticity", "-100 0.3", EN, [-5.5 / 13, -0.5, -7.5 / 13]),
    ("IsotropicElasticityTensor", "-1 0.3", EN, [-17.5 / 13, -7.5 / 13, -7.5 / 13]),
    ("IsotropicElasticityTensor", "-1 1", KG, [1 / 3, -5 / 3, -5 / 3]),
    ("CubicElasticityTensor", "-1 100 0.3", GEN, [1750 / 13, 750 / 13, 750 / 13]),
]


@pytest.mark.parametrize(("type_name", "coefficients", "types", "neml2"), ACCEPTED)
def test_unphysical_but_finite_values_are_accepted_as_neml2_does(
    type_name: str, coefficients: str, types: str, neml2: list[float]
) -> None:
    out = evaluate(build(text(type_name, coefficients, types)))
    torch.testing.assert_close(out.flatten()[:3], torch.tensor(neml2, dtype=F64))


# --- NEML2 3.1.0 itself, where it is installed --------------------------------------------


def ask_neml2(folder: Path, sources: list[str]) -> list[dict[str, Any]]:
    """NEML2's answer per input file (``{"outputs"}`` or ``{"error"}``), one process."""
    python = oracle_python()
    cases = []
    for index, source in enumerate(sources):
        path = folder / f"case{index}.i"
        path.write_text(source)
        tensor_model = "Tensor" in source.split("type = ")[1].split("\n")[0]
        given = "stress" if "compliance = true" in source else "strain"
        steps = [{} if tensor_model else {given: STRAIN.unsqueeze(0)}]
        cases.append(
            {"file": str(path), "model": "model", "batch": 1, "steps": steps, "outputs_only": True}
        )
    request, result = folder / "request.pt", folder / "result.pt"
    torch.save({"cases": cases}, request)
    done = subprocess.run(
        [python, str(ORACLE), str(request), str(result)],
        capture_output=True,
        text=True,
        check=False,
        env=oracle_env(),
    )
    assert done.returncode == 0, f"the NEML2 oracle failed: {done.stderr[-3000:]}"
    return [c["steps"][0] if "steps" in c else c for c in torch.load(result)["cases"]]


def test_neml2_still_does(tmp_path: Path) -> None:
    """NEML2 3.1.0 accepts every case above: the overflows and the singular constants
    it computes nothing finite (or zero) with, which is why they are refused here; the
    unphysical but finite ones as recorded."""
    overflow = [text(t, c, k) for t, c, k, _, _ in OVERFLOW]
    singular = [text(t, c, k, e) for t, c, k, e, _ in SINGULAR]
    accepted = [text(t, c, k) for t, c, k, _ in ACCEPTED]
    answers = ask_neml2(tmp_path, overflow + accepted + singular)
    for source, answer in zip(singular, answers[-len(singular) :], strict=True):
        if "error" in answer:  # a pair of constants NEML2 3.1.0 does not implement
            assert "only supports the (YOUNGS_MODULUS, POISSONS_RATIO)" in answer["error"]
            continue
        (out,) = answer["outputs"].values()
        assert not torch.isfinite(out).all(), source
    for (*_, computed), source, answer in zip(OVERFLOW, overflow, answers, strict=False):
        assert "error" not in answer, source
        (out,) = answer["outputs"].values()
        if computed == "zero":
            assert torch.equal(out, torch.zeros_like(out)), source
        else:
            assert not torch.isfinite(out).all(), source
    start = len(overflow)
    for (*_, want), answer in zip(ACCEPTED, answers[start : start + len(ACCEPTED)], strict=True):
        assert "error" not in answer
        (out,) = answer["outputs"].values()
        torch.testing.assert_close(out.flatten()[:3], torch.tensor(want, dtype=F64))


# --- item 5: the eager model checks its arguments as the compiled one does ----------------

#: A bad call on the fixture model and the message both models give (model 'model').
BAD_CALLS: dict[str, tuple[str, tuple[dict[str, torch.Tensor], ...], str]] = {
    "float32": (
        "forward",
        ({"strain": torch.zeros(4, 6)},),
        "input 'strain' is torch.float32 on cpu, expected torch.float64 on cpu",
    ),
    "int64": (
        "jacobian",
        ({"strain": torch.zeros(6, dtype=torch.int64)},),
        "input 'strain' is torch.int64 on cpu, expected torch.float64 on cpu",
    ),
    "meta": (
        "param_jacobian",
        ({"strain": torch.zeros(2, 6, dtype=F64, device="meta")},),
        "input 'strain' is torch.float64 on meta, expected torch.float64 on cpu",
    ),
    "extra-input": (
        "forward",
        ({"strain": torch.zeros(6, dtype=F64), "temperature": torch.zeros(())},),
        "unknown input 'temperature' (expected inputs: strain)",
    ),
    "misspelt-input": (
        "forward",
        ({"strain": torch.zeros(6, dtype=F64), "strian": torch.zeros(6, dtype=F64)},),
        "unknown input 'strian' (expected inputs: strain)",
    ),
    "float32-tangent": (
        "jvp",
        ({"strain": torch.zeros(3, 6, dtype=F64)}, {"strain": torch.zeros(3, 6)}),
        "tangent 'strain' is torch.float32 on cpu, expected torch.float64 on cpu",
    ),
    "float32-cotangent": (
        "param_vjp",
        ({"strain": torch.zeros(3, 6, dtype=F64)}, {"stress": torch.zeros(6)}),
        "cotangent 'stress' is torch.float32 on cpu, expected torch.float64 on cpu",
    ),
    "misspelt-cotangent": (
        "param_vjp",
        ({"strain": torch.zeros(3, 6, dtype=F64)}, {"stres": torch.zeros(6, dtype=F64)}),
        "unknown cotangent 'stres' (expected outputs: stress)",
    ),
}


@pytest.fixture(scope="module")
def eager() -> Model:
    model = neml2.load_model(SOURCE, "model")
    assert isinstance(model, Model)
    return model


@pytest.mark.parametrize("case", list(BAD_CALLS))
def test_eager_model_refuses_a_bad_call(eager: Model, case: str) -> None:
    method, args, message = BAD_CALLS[case]
    with pytest.raises(Neml2Error, match=re.escape(f"model 'model': {message}")):
        getattr(eager, method)(*args)


@pytest.mark.parametrize("batch", [None, 3])
def test_eager_jvp_without_tangents_is_zero(eager: Model, batch: int | None) -> None:
    strain = torch.ones(6, dtype=F64) if batch is None else torch.ones(batch, 6, dtype=F64)
    result = eager.jvp({"strain": strain}, {})
    assert list(result) == ["stress"]
    assert torch.equal(result["stress"], torch.zeros_like(strain))


def test_eager_checks_leave_good_calls_alone(eager: Model) -> None:
    x = {"strain": STRAIN.expand(2, 6)}
    assert torch.equal(eager.jvp(x, x)["stress"], eager.forward(x)["stress"])  # linear
    assert eager.param_vjp(x, {})["model.E"].item() == 0.0
    assert eager.device == torch.device("cpu")


@pytest.mark.aoti
@pytest.mark.parametrize("case", list(BAD_CALLS))
def test_eager_and_compiled_refuse_alike(
    loadable_elastic: tuple[Path, str], eager: Model, case: str
) -> None:
    compiled = neml2.load_model(loadable_elastic[0] / "model_aoti.i", "model")
    method, args, _ = BAD_CALLS[case]
    messages = []
    for model in (compiled, eager):
        with pytest.raises(Neml2Error) as err:
            getattr(model, method)(*args)
        messages.append(str(err.value))
    assert messages[0] == messages[1]


@pytest.mark.aoti
@pytest.mark.parametrize("batch", [None, 3])
def test_eager_and_compiled_jvp_without_tangents_agree(
    loadable_elastic: tuple[Path, str], eager: Model, batch: int | None
) -> None:
    compiled = neml2.load_model(loadable_elastic[0] / "model_aoti.i", "model")
    strain = torch.ones(6, dtype=F64) if batch is None else torch.ones(batch, 6, dtype=F64)
    got, want = compiled.jvp({"strain": strain}, {}), eager.jvp({"strain": strain}, {})
    assert list(got) == list(want) == ["stress"]
    torch.testing.assert_close(got, want, rtol=0, atol=0)
