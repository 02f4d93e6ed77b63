"""NEML2 test-style input files ([Drivers] of type ModelUnitTest) run with our models.

Every test-style file of tests/neml2_inputs (the unit/ folder, one or more per family of
solid-mechanics types, and the top-level ones) passes its driver's checks with our
models (:func:`neml2.unit_test.run_unit_test`: values, Jacobians and parameter Jacobians
against central differences), and NEML2 3.1.0's own ModelUnitTest driver agrees with
the values the file states (one oracle process for all files). The rest checks that a
check can fail, and that a bad driver is a one-line error.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from neml2 import run
from neml2.errors import HitError, Neml2Error
from neml2.unit_test import run_unit_test

from .oracle import oracle_folder, unit_test_answers  # noqa: F401
from .test_neml2_oracle import INPUTS

FILES = sorted((INPUTS / "unit").glob("*.i")) + [
    INPUTS / f"{name}.i"
    for name in (
        "linear_isotropic_elasticity",
        "scalar_linear_combination",
        "sr2_linear_combination",
        "thermal_eigenstrain",
    )
]
IDS = [f.stem for f in FILES]


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_driver_passes_with_our_models(path: Path) -> None:
    report = run_unit_test(path)
    assert report.ok, "; ".join(f"{c.name}: {c.detail}" for c in report.failures)
    names = [c.name for c in report.checks]
    assert any(n.startswith("value of") for n in names), names
    assert len(names) > 1, names  # derivatives were checked too


@pytest.fixture(scope="module")
def theirs(oracle_folder: Path) -> list[dict]:  # noqa: F811
    return unit_test_answers(oracle_folder, FILES)


@pytest.mark.parametrize("index", range(len(FILES)), ids=IDS)
def test_neml2_agrees_with_the_values_in_the_file(index: int, theirs: list[dict]) -> None:
    answer = theirs[index]
    assert "error" not in answer, f"NEML2 3.1.0's ModelUnitTest: {answer['error']}"
    checked = sum(1 for c in run_unit_test(FILES[index]).checks if c.name.startswith("value"))
    assert answer["values"] == checked


def test_family_coverage() -> None:
    """At least one file per family of solid-mechanics types."""
    text = "\n".join(f.read_text() for f in FILES)
    for type_name in (
        "IsotropicElasticityTensor",
        "GreenLagrangeStrain",
        "PerzynaPlasticFlowRate",
        "ChabochePlasticHardening",
        "ZenerElement",
        "BilinearTraction",
        "PowerLawSlipRule",
    ):
        assert f"type = {type_name}" in text, type_name


SOURCE = INPUTS / "scalar_linear_combination.i"


def variant(tmp_path: Path, old: str, new: str) -> Path:
    text = SOURCE.read_text()
    assert old in text
    path = tmp_path / "unit.i"
    path.write_text(text.replace(old, new))
    return path


def test_a_wrong_value_fails_and_says_where(tmp_path: Path) -> None:
    report = run_unit_test(variant(tmp_path, "'-3'", "'-3.5'"))
    assert not report.ok
    (failure,) = report.failures
    assert failure.name == "value of 'C'"
    assert "got -3, expected -3.5" in failure.detail


def test_tolerances_are_the_files(tmp_path: Path) -> None:
    """Within value_abs_tol a value passes; with zero derivative tolerances the central
    differences (exact only to round-off) fail, so the derivative check is live."""
    loose = variant(tmp_path, "'-3'", "'-3.001'\n    value_abs_tol = 0.01")
    assert run_unit_test(loose).ok
    tight = variant(
        tmp_path,
        "'-3'",
        "'-3'\n    derivative_rel_tol = 0\n    derivative_abs_tol = 0"
        "\n    check_AD_parameter_derivatives = false",
    )
    failed = {c.name for c in run_unit_test(tight).failures}
    assert failed
    assert failed <= {"dC/dA", "dC/dB"}


def test_an_input_not_given_is_zero_and_second_derivatives_are_skipped(tmp_path: Path) -> None:
    path = variant(
        tmp_path,
        "input_Scalar_names = 'A B'\n    input_Scalar_values = '3 2'\n"
        "    output_Scalar_names = 'C'\n    output_Scalar_values = '-3'",
        "input_Scalar_names = 'A'\n    input_Scalar_values = '3'\n"
        "    output_Scalar_names = 'C'\n    output_Scalar_values = '-4'\n"
        "    check_second_derivatives = true",
    )
    report = run_unit_test(path)
    assert report.ok
    assert [c.name for c in report.checks if c.ok is None] == ["second derivatives"]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("check_derivatives", "check_derivative", "unknown option 'check_derivative'"),
        ("model = 'model'", "model = 'model'\n    history_Scalar_names = 'A'", "unknown option"),
        ("input_Scalar_values = '3 2'", "input_Scalar_values = '3'", "1 values for 2 names"),
        ("input_Scalar_names = 'A B'", "input_Scalar_names = 'A D'", "'D' is not an input"),
        ("output_Scalar_names = 'C'", "output_Scalar_names = 'E'", "'E' is not an output"),
        ("input_Scalar_values = '3 2'", "input_Scalar_values = '3 two'", "no \\[Tensors\\]"),
        ("type = ModelUnitTest", "type = TransientDriver", "found 0"),
    ],
)
def test_bad_drivers_are_one_line_errors(tmp_path: Path, old: str, new: str, message: str) -> None:
    text = SOURCE.read_text()
    if old == "check_derivatives":
        text = text.replace("model = 'model'", "model = 'model'\n    check_derivative = false")
    else:
        text = text.replace(old, new)
    path = tmp_path / "unit.i"
    path.write_text(text)
    with pytest.raises((HitError, Neml2Error), match=message):
        run_unit_test(path)


def test_a_number_is_only_a_scalar(tmp_path: Path) -> None:
    text = (INPUTS / "sr2_linear_combination.i").read_text()
    path = tmp_path / "unit.i"
    path.write_text(text.replace("input_SR2_values = 'A B'", "input_SR2_values = 'A 1'"))
    with pytest.raises(HitError, match="a number \\('1'\\) is a Scalar"):
        run_unit_test(path)


def test_neml2_run_unit_test(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run.main([str(SOURCE), "--unit-test"]) == 0
    out = capsys.readouterr().out
    assert "ok       value of 'C'" in out
    assert "5 of 5 checks passed" in out
    wrong = variant(tmp_path, "'-3'", "'-3.5'")
    assert run.main([str(wrong), "--unit-test", "unit"]) == 1
    assert "FAILED   value of 'C'" in capsys.readouterr().out
    assert run.main([str(wrong), "--unit-test", "other"]) == 2
    assert "no [Drivers/other] of type ModelUnitTest" in capsys.readouterr().err
    assert run.main([str(SOURCE), "--unit-test", "--model", "model"]) == 2
    # without --unit-test or --model, the file's only model runs on random inputs
    assert run.main([str(SOURCE)]) == 0
    assert "model 'model' (" in capsys.readouterr().out
