"""The command-line tools as a user runs them: a mistake is one line on stderr and exit 2."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import torch

from neml2.models import model_types

from .conftest import FIXTURES, run_module

GOOD = """\
[Models]
  [model]
    type = LinearIsotropicElasticity
    coefficients = '100 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
"""
SOURCE = FIXTURES / "forward_single" / "model.i"


def assert_user_error(result: subprocess.CompletedProcess[str], expected: str) -> None:
    """Exit 2, nothing but ``expected`` on stderr (one line, no traceback)."""
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.rstrip("\n") == expected


@pytest.mark.parametrize(
    ("old", "new", "line", "message"),
    [
        (
            "type = LinearIsotropicElasticity",
            "type = LinearIsotropicElastic",
            3,
            "[Models/model]: unknown model type 'LinearIsotropicElastic'; "
            "did you mean 'LinearIsotropicElasticity'? "
            f"known types: {', '.join(model_types())}",
        ),
        (
            "    coefficients = '100 0.3'\n",
            "",
            2,
            "[Models/model]: missing required parameter 'coefficients'",
        ),
        ("'100 0.3'", "'100 0,3'", 4, "parameter 'coefficients': expected a number, got '0,3'"),
        (
            "POISSONS_RATIO'",
            "POISSON_RATIO'",
            5,
            "parameter 'coefficient_types': unknown coefficient type 'POISSON_RATIO'; expected "
            "two of: YOUNGS_MODULUS, POISSONS_RATIO, BULK_MODULUS, SHEAR_MODULUS, LAME_LAMBDA",
        ),
        ("'100 0.3'", "'100'", 4, "parameter 'coefficients': expected 2 values, got 1"),
        ("  []\n[]\n", "  []\n", 1, "block [Models] is never closed: expected '[]'"),
    ],
    ids=["unknown-type", "missing-key", "bad-number", "unknown-coefficient", "count", "syntax"],
)
def test_input_file_errors(tmp_path: Path, old: str, new: str, line: int, message: str) -> None:
    assert old in GOOD
    path = tmp_path / "bad.i"
    path.write_text(GOOD.replace(old, new))
    result = run_module("neml2.compile", path, "--model", "model", "-o", tmp_path / "out")
    assert_user_error(result, f"{path}:{line}: {message}")
    assert not (tmp_path / "out").exists()


def test_unknown_model_name() -> None:
    result = run_module("neml2.compile", SOURCE, "--model", "elastic")
    assert_user_error(result, f"{SOURCE}:4: [Models] has no model 'elastic'; models defined: model")


def test_missing_file(tmp_path: Path) -> None:
    result = run_module("neml2.compile", tmp_path / "none.i", "--model", "model")
    assert_user_error(
        result,
        f"neml2-compile: error: cannot read input file '{tmp_path / 'none.i'}': "
        "No such file or directory",
    )


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        (
            ["-d", "stress:stress"],
            "-d stress:stress: model 'model' has no derivative pair 'stress:stress'; "
            "pairs (output:input): stress:strain, or ':' for all",
        ),
        (
            ["-p", "E", "mu"],
            "-p mu: model 'model' has no parameter 'mu'; "
            "parameters: model.E, model.nu, or ':' for all",
        ),
        (["--device", "cpu", "mps"], "--device mps: expected cpu, cuda or cuda:N"),
    ],
    ids=["pair", "param", "device"],
)
def test_bad_options(tmp_path: Path, option: list[str], expected: str) -> None:
    result = run_module("neml2.compile", SOURCE, "--model", "model", *option, "-o", tmp_path)
    assert_user_error(result, f"neml2-compile: error: {expected}")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is visible here")
def test_cuda_without_a_gpu(tmp_path: Path) -> None:
    result = run_module("neml2.compile", SOURCE, "--model", "model", "--device", "cuda")
    assert_user_error(
        result,
        "neml2-compile: error: --device cuda: no CUDA device is visible "
        "(torch.cuda.is_available() is False)",
    )


def test_run_eager_model(tmp_path: Path) -> None:
    out = tmp_path / "out.pt"
    result = run_module("neml2.run", SOURCE, "--model", "model", "--batch", "3", "--output", out)
    assert result.returncode == 0, result.stderr
    assert "model 'model' (LinearIsotropicElasticity, eager) on cpu" in result.stdout
    assert "output stress" in result.stdout
    assert "3x6" in result.stdout
    saved = torch.load(out, weights_only=True)
    assert saved["stress"].shape == (3, 6)


def test_run_stub_without_artifacts(tmp_path: Path) -> None:
    stub = tmp_path / "model_aoti.i"
    stub.write_text(
        "[Models]\n  [model]\n    type = AOTIModel\n    artifact_path = 'model'\n  []\n[]\n"
    )
    result = run_module("neml2.run", stub, "--model", "model")
    assert_user_error(
        result,
        f"{stub}:4: [Models/model]: no artifact for device 'cpu': "
        f"'{tmp_path / 'model' / 'cpu'}' is not a folder (compile with --device cpu)",
    )


def test_run_implicit_model_on_strain_sized_random_inputs() -> None:
    source = FIXTURES / "viscoplastic" / "model.i"
    result = run_module("neml2.run", source, "--model", "model", "--batch", "4")
    assert result.returncode == 0, result.stderr
    assert "model 'model' (J2Viscoplasticity, eager) on cpu" in result.stdout
    assert re.search(r"input  strain +4x6 +min \S+ +max 0\.000", result.stdout)
    assert "output equivalent_plastic_strain" in result.stdout


def test_run_reports_a_convergence_failure_in_one_line(tmp_path: Path) -> None:
    source = FIXTURES / "viscoplastic" / "model.i"
    strain = torch.zeros(3, 6, dtype=torch.float64)
    strain[1, 0] = 0.1
    inputs = {
        "strain": strain,
        "old_plastic_strain": torch.zeros(3, 6, dtype=torch.float64),
        "old_equivalent_plastic_strain": torch.zeros(3, dtype=torch.float64),
        "time_step": torch.tensor(8.0, dtype=torch.float64),
    }
    torch.save(inputs, tmp_path / "in.pt")
    result = run_module("neml2.run", source, "--model", "model", "--input", tmp_path / "in.pt")
    assert result.returncode == 2
    assert re.fullmatch(
        r"neml2-run: error: model 'model': 1 of 3 points did not converge "
        r"\(worst residual \d\.\d{3}e-0\d\)\n",
        result.stderr,
    ), result.stderr
