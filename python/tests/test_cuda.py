"""The compiled model on a GPU from Python: load_model and neml2-run on the cuda/ folder.

tests/aoti/forward_single (linear elasticity, E = 100, nu = 0.3) is compiled for cpu and
cuda; every result is checked against the closed-form stress. Skipped without a GPU.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

import neml2

from .conftest import FIXTURES, PYTHON_DIR, run_module

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU visible")

E, NU = 100.0, 0.3


def hooke(strain: torch.Tensor) -> torch.Tensor:
    """Mandel stress of isotropic linear elasticity: 2 mu eps + lambda tr(eps) 1."""
    mu = E / (2 * (1 + NU))
    lam = E * NU / ((1 + NU) * (1 - 2 * NU))
    trace = strain[..., :3].sum(-1, keepdim=True)
    ones = torch.tensor([1.0, 1, 1, 0, 0, 0], dtype=strain.dtype, device=strain.device)
    return 2 * mu * strain + lam * trace * ones


@pytest.fixture(scope="module")
def stub(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("aoti-cuda")
    source = FIXTURES / "forward_single" / "model.i"
    result = run_module(
        "neml2.compile", source, "--model", "model", "--device", "cpu", "cuda", "-o", out
    )
    assert result.returncode == 0, result.stderr
    return out / "model_aoti.i"


@pytest.fixture
def default_device(request: pytest.FixtureRequest) -> Iterator[torch.device]:
    before = torch.get_default_device()
    device = torch.device(request.param)
    torch.set_default_device(device)
    yield device
    torch.set_default_device(before)


@pytest.mark.parametrize("default_device", ["cpu", "cuda", "cuda:0"], indirect=True)
def test_load_model_under_default_device(stub: Path, default_device: torch.device) -> None:
    model = neml2.load_model(stub, "model")
    assert isinstance(model, neml2.CompiledModel)
    strain = 1e-3 * torch.rand(1000, 6, dtype=torch.float64, device=default_device)
    stress = model.forward({"strain": strain})["stress"]
    assert stress.device.type == default_device.type
    torch.testing.assert_close(stress, hooke(strain), rtol=1e-12, atol=0)


@pytest.mark.parametrize("first", ["torch", "neml2"])
def test_either_import_order_loads_the_cuda_folder(stub: Path, first: str) -> None:
    second = "neml2" if first == "torch" else "torch"
    code = f"""
import {first}, {second}
torch.set_default_device("cuda")
model = neml2.load_model({str(stub)!r}, "model")
strain = torch.full((8, 6), 1e-3, dtype=torch.float64)
print(model.forward({{"strain": strain}})["stress"][0, 0].item())
"""
    env = {"PYTHONPATH": str(PYTHON_DIR)}
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert float(result.stdout) == pytest.approx(0.25, rel=1e-12)


@pytest.mark.parametrize("device", ["cpu", "cuda", "cuda:0"])
def test_neml2_run_on_each_folder(stub: Path, tmp_path: Path, device: str) -> None:
    strain = 1e-3 * torch.rand(1000, 6, dtype=torch.float64)
    torch.save({"strain": strain}, tmp_path / "in.pt")
    result = run_module(
        "neml2.run", stub, "--model", "model", "--device", device,
        "--input", tmp_path / "in.pt", "--output", tmp_path / "out.pt",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"on {device}" in result.stdout.splitlines()[0]
    stress = torch.load(tmp_path / "out.pt", weights_only=True)["stress"]
    torch.testing.assert_close(stress, hooke(strain), rtol=1e-12, atol=0)
