"""Mistakes in NEML2's plasticity blocks and ImplicitUpdate: each one line, ``file:line:``.

Every case edits one line of tests/neml2_inputs/j2_viscoplastic.i (the composed J2
viscoplastic model), so the mistake sits where a user would make it, deep inside the
residual model of an ImplicitUpdate; the error must name the edited line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from neml2 import hit
from neml2.errors import HitError
from neml2.models import build_model, model_section

from .conftest import REPO, run_module

SOURCE = REPO / "tests" / "neml2_inputs" / "j2_viscoplastic.i"


def edited(tmp_path: Path, old: str, new: str) -> tuple[Path, int]:
    """The model with the one line holding ``old`` changed to hold ``new``; its line."""
    lines = SOURCE.read_text().splitlines(keepends=True)
    where = [i for i, line in enumerate(lines) if old in line]
    assert len(where) == 1, f"'{old}' is not on exactly one line of {SOURCE}"
    lines[where[0]] = lines[where[0]].replace(old, new)
    path = tmp_path / "model.i"
    path.write_text("".join(lines))
    return path, where[0] + 1


CASES = [
    pytest.param(
        "saturation_rate = 20",
        "saturation_rat = 20",
        "[Models/isoharden]: unknown parameter 'saturation_rat' for VoceIsotropicHardening; "
        "did you mean 'saturation_rate'?",
        id="unknown-option",
    ),
    pytest.param(
        "type = VoceIsotropicHardening",
        "type = VoceIsotropicHardenin",
        "[Models/isoharden]: unknown model type 'VoceIsotropicHardenin'; "
        "did you mean 'VoceIsotropicHardening'?",
        id="misspelt-type",
    ),
    pytest.param(
        "rel_tol = 1e-12",
        "rel_tol = tight",
        "parameter 'rel_tol': expected a number, got 'tight'",
        id="wrong-value-type",
    ),
    pytest.param(
        "invariant_type = 'VONMISES'",
        "invariant_type = 'I2'",
        "parameter 'invariant_type': 'I2' is not supported; I2 and INVALID are named but not "
        "implemented by NEML2 3.1.0; expected one of: VONMISES, EFFECTIVE_STRAIN, I1",
        id="unsupported-choice",
    ),
    pytest.param(
        "unknowns = 'equivalent_plastic_strain'",
        "unknowns = 'equivalent_plastic_strains'",
        "parameter 'unknowns': 'equivalent_plastic_strains' is not an input of model 'rate'",
        id="unknown-not-an-input",
    ),
    pytest.param(
        "unknowns = 'equivalent_plastic_strain'",
        "unknowns = 'equivalent_plastic_strain'  residuals = 'ep_residual'",
        "residual 'ep_residual' is not an output of model 'rate'",
        id="residual-not-an-output",
    ),
    pytest.param(
        "equation_system = 'eq_sys'",
        "equation_system = 'eq_system'",
        "parameter 'equation_system': no [EquationSystems/eq_system]; blocks defined there: eq_sys",
        id="missing-equation-system",
    ),
    pytest.param(
        "predictor = 'predictor'",
        "predictor = 'trial_state'",
        "parameter 'predictor': predictor 'trial_state' predicts 'flow_direction', which is "
        "not an unknown; unknowns: equivalent_plastic_strain",
        id="predictor-of-wrong-type",
    ),
    pytest.param(
        "predictor = 'predictor'",
        "predictor = 'predictr'",
        "parameter 'predictor': no [Models/predictr]; blocks defined there: "
        "trial_elastic_strain, trial_stress,",
        id="missing-predictor",
    ),
    pytest.param(
        "predictor = 'predictor'",
        "predictor = 'return_map'",
        "parameter 'predictor': 'return_map' is this ImplicitUpdate itself; a predictor is "
        "an explicit model whose outputs are unknowns",
        id="predictor-is-the-update",
    ),
    pytest.param(
        "predictor = 'predictor'",
        "predictor = 'model'",
        "parameter 'predictor': 'model' includes this ImplicitUpdate: "
        "Models/model -> Models/return_map -> Models/model",
        id="predictor-includes-the-update",
    ),
    pytest.param(
        "unknowns_Scalar = 'equivalent_plastic_strain'",
        "unknowns_scalar = 'equivalent_plastic_strain'",
        "unknown parameter 'unknowns_scalar' for ConstantExtrapolationPredictor; "
        "did you mean 'unknowns_Scalar'?",
        id="predictor-option-case",
    ),
    pytest.param(
        "solver = 'newton'",
        "solver = 'newtn'",
        "unknown solver 'newtn': expected [Solvers/newtn]; solvers defined: newton, lu",
        id="missing-solver",
    ),
]


@pytest.mark.parametrize(("old", "new", "message"), CASES)
def test_a_mistake_is_one_line_at_its_line(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    path, line = edited(tmp_path, old, new)
    with pytest.raises(HitError) as caught:
        build_model(model_section(hit.load(path), "model"))
    text = str(caught.value)
    assert "\n" not in text
    assert text.startswith(f"{path}:{line}: "), text
    assert message in text


PREDICTOR_BLOCK = (
    "  [predictor]\n"
    "    type = ConstantExtrapolationPredictor\n"
    "    unknowns_Scalar = 'equivalent_plastic_strain'\n"
    "  []\n"
)


@pytest.mark.parametrize(
    ("block", "message"),
    [
        pytest.param(
            PREDICTOR_BLOCK.replace("unknowns_Scalar", "unknowns_SR2"),
            "parameter 'predictor': predictor 'predictor' predicts 'equivalent_plastic_strain' "
            "of shape (6,), but the unknown has shape ()",
            id="predicts-another-shape",
        ),
        pytest.param(
            "  [predictor]\n"
            "    type = ImplicitUpdate\n"
            "    equation_system = 'eq_sys'\n"
            "    solver = 'newton'\n"
            "  []\n",
            "parameter 'predictor': predictor 'predictor' is itself implicit; not supported",
            id="implicit-predictor",
        ),
    ],
)
def test_a_predictor_that_cannot_serve_is_reported_at_the_update(
    tmp_path: Path, block: str, message: str
) -> None:
    # the predictor block itself is valid: the error is the update's use of it
    text = SOURCE.read_text()
    assert text.count(PREDICTOR_BLOCK) == 1
    path = tmp_path / "model.i"
    path.write_text(text.replace(PREDICTOR_BLOCK, block))
    line = text.splitlines().index("    predictor = 'predictor'") + 1
    line += block.count("\n") - PREDICTOR_BLOCK.count("\n")  # the block sits above it
    with pytest.raises(HitError) as caught:
        build_model(model_section(hit.load(path), "model"))
    assert str(caught.value) == f"{path}:{line}: {message}"


def test_a_residual_model_that_includes_the_update_is_reported(tmp_path: Path) -> None:
    # not a RecursionError: the update is among the blocks being built
    path, _ = edited(tmp_path, "model = 'rate'", "model = 'model'")
    with pytest.raises(HitError) as caught:
        build_model(model_section(hit.load(path), "model"))
    assert str(caught.value).endswith(
        "[Models/model]: models include each other: "
        "Models/model -> Models/return_map -> Models/model"
    )


def test_a_missing_variable_name_is_reported_at_its_block(tmp_path: Path) -> None:
    # ScalarVariableRate without the one key it needs: the error points at the block
    block = "  [ep_rate]\n    type = ScalarVariableRate\n"
    key = "    variable = 'equivalent_plastic_strain'\n"
    text = SOURCE.read_text()
    assert text.count(block + key) == 1
    path = tmp_path / "model.i"
    path.write_text(text.replace(block + key, block))
    header = text.splitlines().index("  [ep_rate]") + 1
    with pytest.raises(HitError) as caught:
        build_model(model_section(hit.load(path), "model"))
    assert str(caught.value) == (
        f"{path}:{header}: [Models/ep_rate]: missing required parameter 'variable'"
    )


def test_neml2_compile_prints_the_line_and_exits_2(tmp_path: Path) -> None:
    path, line = edited(tmp_path, "rel_tol = 1e-12", "rel_tol = fast")
    result = run_module("neml2.compile", path, "--model", "model", "-o", tmp_path / "aoti")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (f"{path}:{line}: parameter 'rel_tol': expected a number, got 'fast'\n")
    assert not (tmp_path / "aoti").exists()
