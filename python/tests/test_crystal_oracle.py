"""Crystal plasticity: each model type of NEML2 3.1.0's crystal-plasticity family against
NEML2 itself (values and Jacobians, rtol 1e-8), with per-slip-system quantities on one
sub-batch axis of 12 slip systems."""

from __future__ import annotations

import pytest
import torch

from neml2.tensors import mrp_to_matrix

from .conftest import REPO
from .oracle import (  # noqa: F401
    Case,
    answers,
    check,
    check_by_differences,
    oracle_folder,
    parameter_jacobian_by_differences,
)

INPUTS = REPO / "tests" / "neml2_inputs" / "crystal"
B = 3
NSLIP = 12


def randn(*shape: int, seed: int, scale: float = 1.0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return scale * torch.randn(shape, generator=g, dtype=torch.float64)


def uniform(*shape: int, seed: int, low: float, high: float) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return low + (high - low) * torch.rand(shape, generator=g, dtype=torch.float64)


def rotation(seed: int) -> torch.Tensor:
    return mrp_to_matrix(randn(B, 3, seed=seed, scale=0.3))


CASES = [
    Case(INPUTS / "resolved_shear.i", {"S": randn(B, 6, seed=1, scale=100), "Q": rotation(2)}),
    Case(
        INPUTS / "power_law_slip_rule.i",
        {
            "tau": randn(B, NSLIP, seed=3, scale=50),
            "strength": uniform(B, NSLIP, seed=4, low=40, high=60),
        },
    ),
    Case(INPUTS / "sum_slip_rates.i", {"slip_rates": randn(B, NSLIP, seed=5, scale=1e-2)}),
    Case(INPUTS / "single_slip_strength_map.i", {"tau_bar": uniform(B, seed=6, low=0, high=30)}),
    Case(
        INPUTS / "dislocation_obstacle_strength_map.i",
        {"rho": uniform(B, NSLIP, seed=7, low=1e-3, high=1e-1)},
    ),
    Case(
        INPUTS / "voce_single_slip_hardening.i",
        {
            "slip_hardening": uniform(B, seed=8, low=0, high=50),
            "sum_slip_rates": uniform(B, seed=9, low=0, high=0.1),
        },
    ),
    Case(
        INPUTS / "linear_single_slip_hardening.i",
        {"h": uniform(B, seed=10, low=0, high=50), "gsum": uniform(B, seed=11, low=0, high=0.1)},
    ),
    Case(
        INPUTS / "per_slip_forest.i",
        {
            "rho": uniform(B, NSLIP, seed=12, low=1e-3, high=1e-1),
            "slip_rates": randn(B, NSLIP, seed=13, scale=1e-2),
        },
    ),
    Case(
        INPUTS / "slip_chain.i",
        {
            "stress": randn(B, 6, seed=14, scale=60),
            "orientation": randn(B, 3, seed=15, scale=0.3),
            "slip_hardening": uniform(B, seed=16, low=0, high=30),
        },
    ),
    Case(
        INPUTS / "plastic_deformation_rate.i",
        {"Q": rotation(17), "slip_rates": randn(B, NSLIP, seed=18, scale=1e-2)},
    ),
    Case(
        INPUTS / "plastic_spatial_velocity_gradient.i",
        {"Q": rotation(19), "slip_rates": randn(B, NSLIP, seed=20, scale=1e-2)},
    ),
    Case(
        INPUTS / "plastic_vorticity.i",
        {"orientation_matrix": rotation(21), "gdot": randn(B, NSLIP, seed=22, scale=1e-2)},
    ),
    Case(
        INPUTS / "elastic_strain_rate.i",
        {
            "ee": randn(B, 6, seed=23, scale=1e-3),
            "deformation_rate": randn(B, 6, seed=24, scale=1e-2),
            "vorticity": randn(B, 3, seed=25, scale=1e-2),
            "plastic_deformation_rate": randn(B, 6, seed=26, scale=1e-2),
        },
    ),
    Case(
        INPUTS / "orientation_rate.i",
        {
            "elastic_strain": randn(B, 6, seed=27, scale=1e-3),
            "w": randn(B, 3, seed=28, scale=1e-2),
            "plastic_deformation_rate": randn(B, 6, seed=29, scale=1e-2),
            "plastic_vorticity": randn(B, 3, seed=30, scale=1e-2),
        },
    ),
    # |r|^2 about 0.1, 1.0 and 2.0: one kept, two switched to the shadow set
    Case(
        INPUTS / "fix_orientation.i",
        {
            "r": torch.tensor(
                [[0.2, -0.1, 0.2], [0.6, 0.5, -0.6], [1.0, -0.7, 0.7]], dtype=torch.float64
            )
        },
    ),
]


@pytest.fixture(scope="module")
def theirs(oracle_folder):  # noqa: F811 (the imported fixture)
    return answers(oracle_folder, CASES)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c.id for c in CASES])
def test_agrees_with_neml2(index: int, theirs: list[dict]) -> None:
    check(CASES[index], theirs[index])


WITH_PARAMETERS = [i for i, c in enumerate(CASES) if c.build().parameters]


@pytest.mark.parametrize("index", WITH_PARAMETERS, ids=[CASES[i].id for i in WITH_PARAMETERS])
def test_parameter_derivatives_agree_with_differences(index: int) -> None:
    model, x = CASES[index].build(), dict(CASES[index].inputs)
    assert model.param_jacobian(x), "no parameter Jacobian"
    parameter_jacobian_by_differences(model, x, CASES[index].id, atol=1e-9, scaled=False)


def test_slip_axis_reaches_every_model_downstream() -> None:
    model = next(c for c in CASES if c.id == "slip_chain").build()
    shapes = {v.name: v.sub_batch for v in model.outputs}
    assert shapes == {"slip_rates": (NSLIP,), "slip_hardening_rate": ()}
