"""Parameters given as variable names (tests/neml2_inputs/coupled): the variable becomes
an input of the model, and values and Jacobians agree with NEML2 3.1.0 at rtol 1e-8.

A ComposedModel brings in a model that a parameter names. Where NEML2 3.1.0 returns a
zero block for a coupled parameter (through an SSR4 parameter or a crystal model) or
fails on the Jacobian, our blocks are checked by central differences of our (oracle-
checked) values instead, and NEML2's zero is asserted so that a fix there shows up.
"""

from __future__ import annotations

import pytest
import torch

from neml2 import hit
from neml2.compile import Request, prepare
from neml2.errors import HitError, Neml2Error
from neml2.models import Model, build_model
from neml2.models.coupling import CoupledParameters

from .oracle import (  # noqa: F401
    Case,
    answers,
    as_neml2_writes,
    check_by_differences,
    full_jacobian,
    oracle_folder,
    parameter_jacobian_by_differences,
)
from .test_neml2_oracle import INPUTS, assert_agree

FOLDER = INPUTS / "coupled"
B = 3
F64 = torch.float64
_g = torch.Generator().manual_seed(20240917)


def u(*shape: int, low: float, high: float) -> torch.Tensor:
    return low + (high - low) * torch.rand(shape, generator=_g, dtype=F64)


def strain() -> torch.Tensor:
    return u(B, 6, low=-1e-3, high=1e-3)


def scalars(*values: float) -> torch.Tensor:
    return torch.tensor(values, dtype=F64)


CASES = [
    Case(
        FOLDER / "elasticity_variable_modulus.i",
        {"strain": strain(), "youngs_modulus": u(B, low=1e5, high=2e5)},
    ),
    Case(
        FOLDER / "elasticity_temperature_modulus.i",
        {"strain": strain(), "temperature": u(B, low=300, high=900)},
    ),
    Case(
        FOLDER / "elasticity_tensor_chain.i",
        {
            "strain": strain(),
            "orientation": u(B, 3, low=-0.3, high=0.3),
            "shear_modulus": u(B, low=5e4, high=9e4),
        },
    ),
    Case(
        FOLDER / "thermal_eigenstrain_variable_cte.i",
        {"temperature": u(B, low=300, high=900), "alpha": u(B, low=1e-6, high=2e-5)},
    ),
    Case(
        FOLDER / "perzyna_hardening_viscosity.i",
        {
            "effective_stress": u(B, low=150, high=300),
            "isotropic_hardening": u(B, low=0, high=40),
            "sy": u(B, low=80, high=120),
            "temperature": u(B, low=600, high=900),
            "n": u(B, low=3, high=6),
        },
    ),
    Case(
        FOLDER / "kelvin_voigt_variable_modulus.i",
        {"strain": strain(), "strain_rate": strain(), "E": u(B, low=1e3, high=2e3)},
    ),
    Case(
        FOLDER / "cohesive_chain.i",
        {
            "normal_separation": scalars(0.004, 0.01, -0.002),
            "tangential_separation": u(B, low=0, high=0.004),
            "effective_separation": scalars(0.005, 0.011, 0.003),
            "tangential_separation_1": u(B, low=-0.003, high=0.003),
            "tangential_separation_2": u(B, low=-0.003, high=0.003),
            "damage~1": scalars(0.0, 0.3, 0.1),
        },
    ),
    Case(
        FOLDER / "crystal_slip_variable.i",
        {
            "resolved_shears": u(B, 12, low=-60, high=60),
            "slip_hardening": u(B, low=0, high=20),
            "tau0": u(B, low=30, high=40),
            "reference_rate": u(B, low=1e-3, high=1e-2),
        },
    ),
]
#: Blocks d(output)/d(coupled variable) that NEML2 3.1.0 returns as zeros.
NEML2_ZEROS = {
    "elasticity_tensor_chain": [("stress", "shear_modulus")],
    "crystal_slip_variable": [("slip_rates", "tau0"), ("slip_rates", "reference_rate")],
}
#: Cases whose Jacobian NEML2 3.1.0 fails to build (it gives the values).
NEML2_NO_JACOBIAN = {"cohesive_chain"}


@pytest.fixture(scope="module")
def theirs(oracle_folder) -> list[dict]:  # noqa: F811
    return answers(oracle_folder, CASES)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c.id for c in CASES])
def test_agrees_with_neml2(index: int, theirs: list[dict]) -> None:
    case, answer = CASES[index], theirs[index]
    assert "error" not in answer, f"NEML2 refused {case.id}: {answer['error']}"
    model = case.build()
    x = dict(case.inputs)
    assert_agree(model.forward(x), answer["outputs"], f"{case.id} outputs")
    assert ("jacobian_error" in answer) == (case.id in NEML2_NO_JACOBIAN), case.id
    if case.id in NEML2_NO_JACOBIAN:
        check_by_differences(model, x, case.id)
        return
    their_jac = answer["jacobian"]
    zeros = NEML2_ZEROS.get(case.id, [])
    for of, wrt in zeros:
        assert not their_jac[of][wrt].any(), f"NEML2 now gives d{of}/d{wrt}: compare it"
        del their_jac[of][wrt]
    ours = as_neml2_writes(model, full_jacobian(model, x), their_jac)
    for of, wrt in zeros:
        del ours[of][wrt]
    assert_agree(ours, their_jac, f"{case.id} jacobian")
    if zeros:
        check_by_differences(model, x, case.id)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c.id for c in CASES])
def test_parameter_jacobian_by_differences(index: int) -> None:
    case = CASES[index]
    model = case.build()
    parameter_jacobian_by_differences(model, dict(case.inputs), case.id)


def test_coupled_parameter_becomes_the_last_input() -> None:
    model = CASES[0].build()
    assert isinstance(model, CoupledParameters)
    assert [v.name for v in model.inputs] == ["strain", "youngs_modulus"]
    assert list(model.parameters) == ["model.nu"]
    # the modulus scales the stress: twice the modulus, twice the stress
    x = dict(CASES[0].inputs)
    twice = model.forward({**x, "youngs_modulus": 2 * x["youngs_modulus"]})["stress"]
    torch.testing.assert_close(twice, 2 * model.forward(x)["stress"], rtol=1e-14, atol=0)


def test_a_model_named_by_a_parameter_joins_the_composition() -> None:
    model = CASES[1].build()
    assert {v.name for v in model.inputs} == {"temperature", "strain"}
    assert [m.name for m in model.models] == ["modulus", "elastic"]
    chain = CASES[6].build()
    assert sorted(m.name for m in chain.models) == ["failure", "mixity", "onset", "traction"]


def test_empty_batch() -> None:
    model = CASES[0].build()
    out = model.forward({k: v[:0] for k, v in CASES[0].inputs.items()})
    assert out["stress"].shape == (0, 6)


def test_compiling_is_refused_with_a_reason() -> None:
    with pytest.raises(Neml2Error, match="given by the variable 'youngs_modulus'"):
        prepare(Request(file=str(CASES[0].file), model="model"))


def build(body: str, name: str = "model") -> Model:
    text = f"[Models]\n{body}\n[]\n"
    return build_model(hit.parse(text, "f.i").children["Models"].children[name])


ELASTIC = "type = LinearIsotropicElasticity\n coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        # an option NEML2 does not let a user couple keeps requiring a number
        (
            "[model]\n type = CamanhoDavilaCriticalSeparation\n mode_mixity = 0.5\n"
            " penalty_stiffness = k\n normal_strength = 1\n shear_strength = 1\n[]",
            "parameter 'penalty_stiffness': expected a number, got 'k'",
        ),
        (
            f"[model]\n {ELASTIC}\n coefficients = 'other.E 0.3'\n[]",
            "expected a number, got 'other.E'",
        ),
        (f"[model]\n {ELASTIC}\n coefficients = 'model 0.3'\n[]", "names this model itself"),
        (
            f"[two]\n type = SR2Invariant\n invariant_type = I1\n tensor = a\n[]\n"
            f"[model]\n {ELASTIC}\n coefficients = 'two.nothing 0.3'\n[]",
            "model 'two' has no output 'nothing'",
        ),
        (
            "[split]\n type = SR2LinearCombination\n from = 'a b'\n to = c\n[]\n"
            f"[model]\n {ELASTIC}\n coefficients = 'split 0.3'\n[]",
            "has shape",
        ),
        (
            "[a]\n type = LinearIsotropicHardening\n hardening_modulus = b\n[]\n"
            "[b]\n type = LinearIsotropicHardening\n hardening_modulus = a\n"
            " isotropic_hardening = h2\n[]\n"
            f"[model]\n {ELASTIC}\n coefficients = 'a 0.3'\n[]",
            "models give each other parameters",
        ),
        (f"[model]\n {ELASTIC}\n coefficients = 'stress 0.3'\n[]", "is an output of this model"),
    ],
)
def test_bad_couplings_are_clear_errors(body: str, message: str) -> None:
    with pytest.raises(HitError, match=message):
        build(body)
