"""Analytic derivatives against central finite differences (1e-6 relative)."""

from __future__ import annotations

import itertools

import pytest
import torch

from neml2.models import Model
from neml2.models.elasticity import COEFFICIENT_SYMBOLS

from .oracle import parameter_differences
from .test_elasticity import make, reference_constants

F64 = torch.float64
RTOL = 1e-6


def assert_close_relative(actual: torch.Tensor, expected: torch.Tensor) -> None:
    scale = expected.abs().max().clamp_min(1e-300)
    error = (actual - expected).abs().max() / scale
    assert error.item() < RTOL, f"relative error {error.item():.3g}"


def fd_wrt_input(model: Model, strain: torch.Tensor, h: float = 1e-6) -> torch.Tensor:
    """(B, 6, 6) by central differences of forward along each strain component."""
    columns = []
    for j in range(6):
        step = torch.zeros_like(strain)
        step[:, j] = h
        plus = model.forward({"strain": strain + step})["stress"]
        minus = model.forward({"strain": strain - step})["stress"]
        columns.append((plus - minus) / (2 * h))
    return torch.stack(columns, dim=-1)


def fd_wrt_param(model: Model, strain: torch.Tensor, name: str) -> torch.Tensor:
    """(B, 6) by central differences of forward along one parameter."""
    return parameter_differences(model, {"strain": strain}, name)["stress"]


PAIRS = list(itertools.combinations(COEFFICIENT_SYMBOLS, 2))


@pytest.fixture(params=PAIRS, ids=lambda pair: "+".join(COEFFICIENT_SYMBOLS[t] for t in pair))
def model(request: pytest.FixtureRequest) -> Model:
    first, second = request.param
    ref = reference_constants(2.0e5, 0.3)
    a, b = ref[COEFFICIENT_SYMBOLS[first]], ref[COEFFICIENT_SYMBOLS[second]]
    return make(f"{a!r} {b!r}", f"{first} {second}")


@pytest.fixture
def strain() -> torch.Tensor:
    torch.manual_seed(0)
    return torch.randn(7, 6, dtype=F64) * 1e-3


def test_jacobian(model: Model, strain: torch.Tensor) -> None:
    jac = model.jacobian({"strain": strain})["stress"]["strain"]
    fd = fd_wrt_input(model, strain)
    for b in range(strain.shape[0]):
        assert_close_relative(jac, fd[b])


def test_param_jacobian(model: Model, strain: torch.Tensor) -> None:
    blocks = model.param_jacobian({"strain": strain})["stress"]
    assert list(blocks) == list(model.named_parameters())
    for name, block in blocks.items():
        assert block.shape == (7, 6)
        assert_close_relative(block, fd_wrt_param(model, strain, name))


def test_jvp(model: Model, strain: torch.Tensor) -> None:
    tangent = torch.randn_like(strain)
    h = 1e-6
    plus = model.forward({"strain": strain + h * tangent})["stress"]
    minus = model.forward({"strain": strain - h * tangent})["stress"]
    jvp = model.jvp({"strain": strain}, {"strain": tangent})["stress"]
    assert jvp.shape == (7, 6)
    assert_close_relative(jvp, (plus - minus) / (2 * h))


def test_param_vjp(model: Model, strain: torch.Tensor) -> None:
    cotangent = torch.randn_like(strain)
    adjoints = model.param_vjp({"strain": strain}, {"stress": cotangent})
    for name, adjoint in adjoints.items():
        assert adjoint.shape == ()
        expected = (cotangent * fd_wrt_param(model, strain, name)).sum()
        assert_close_relative(adjoint, expected)
