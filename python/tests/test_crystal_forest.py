"""Single-crystal plasticity with one dislocation density per slip system as an unknown
(tests/neml2_inputs/crystal/forest_crystal.i: ImplicitUpdate with NewtonWithLineSearch,
a CrystalPlasticityStrainPredictor composed with a ConstantExtrapolationPredictor),
driven over 20 steps, each from the state the previous one left, against NEML2 3.1.0 at
every step: the outputs at rtol 1e-8.

NEML2 3.1.0's line search raises IndexError unless the call has a batch of two points,
so each point goes to it twice, as a batch of two. Its Jacobian of an update whose
unknown has a sub-batch axis fails whatever the batch (a reshape of the density block
to ``(1, 1, 12, 12)``, or the sub-batch axis broadcast as a batch axis), so our
Jacobians are checked by central differences of our own (NEML2-checked) values at two
steps; test_crystal_line_search.py checks the Jacobians of updates solved by the same
solver (NewtonWithLineSearch, backtracking and strong Wolfe) from the same predictor
(CrystalPlasticityStrainPredictor) against NEML2, on a crystal without sub-batched unknowns.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from neml2 import hit
from neml2.models import Model
from neml2.models.base import raise_if_failed
from neml2.models.sub_batch import build_with_settings

from .conftest import REPO
from .oracle import check_by_differences, requested
from .test_neml2_oracle import assert_agree

FILE = REPO / "tests" / "neml2_inputs" / "crystal" / "forest_crystal.i"
STEPS = 20
NSLIP = 12
DENSITY = "forest_density"
STATE = ("elastic_strain", "orientation", DENSITY)


def build(path: Path = FILE) -> Model:
    return build_with_settings(hit.load(path), "model")


def loading(step: int) -> dict[str, torch.Tensor]:
    """Tension with shear and a small spin, ramped up over the first 8 steps; 0.5 s each."""
    level = min(step, 8) / 8
    d = torch.tensor([[1.0, -0.5, -0.5, 0.1, 0.0, 0.2]], dtype=torch.float64)
    w = torch.tensor([[1.0, -2.0, 0.5]], dtype=torch.float64)
    return {
        "deformation_rate": 1.2e-3 * level * d,
        "vorticity": 1e-4 * w,
        "t": torch.full((1,), 0.5 * step, dtype=torch.float64),
        "t~1": torch.full((1,), 0.5 * (step - 1), dtype=torch.float64),
    }


def drive(model: Model) -> tuple[list[dict], list[dict], list[dict]]:
    """Our model over STEPS steps at one point: the inputs, outputs and Jacobians of each."""
    state = {
        "elastic_strain": torch.zeros(1, 6, dtype=torch.float64),
        "orientation": torch.tensor([[0.3, 0.1, -0.2]], dtype=torch.float64),
        DENSITY: (8 + 0.5 * torch.arange(NSLIP, dtype=torch.float64)).unsqueeze(0),
    }
    steps, outputs, jacobians = [], [], []
    for step in range(1, STEPS + 1):
        x = {**loading(step), **{f"{k}~1": v for k, v in state.items()}}
        ev = model.evaluate(x, model.parameters, jacobian=True)
        raise_if_failed(model.name, ev.status)
        steps.append(x)
        outputs.append(ev.outputs)
        jacobians.append(ev.jacobian)
        state = {k: ev.outputs[k] for k in STATE}
    return steps, outputs, jacobians


def ask_neml2(folder: Path, steps: list[dict]) -> dict:
    """NEML2's outputs at every step, each point twice (a batch of two): ``{"steps": [...]}``.
    Each step's inputs are known beforehand (our drive made them), so each goes as a
    request of its own, and one that met NEML2's intermittent layout fault is asked again
    alone."""
    requests = [
        {
            "file": str(FILE),
            "model": "model",
            "batch": 1,
            "steps": [{k: v.expand(2, *v.shape[1:]).unsqueeze(0) for k, v in x.items()}],
            "sub_batch_ndim": {f"{DENSITY}~1": 1},
            "outputs_only": True,
        }
        for x in steps
    ]
    answered = requested(folder, requests)
    for a in answered:
        assert "error" not in a, f"NEML2 failed: {a['error']}"
    return {"steps": [a["steps"][0] for a in answered]}


def first(tree: dict) -> dict:
    """A NEML2 answer ``(1, B, ...)`` as our ``(1, ...)``: the first point of its batch."""
    return {k: first(v) if isinstance(v, dict) else v[0, :1] for k, v in tree.items()}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple:
    model = build()
    steps, outputs, jacobians = drive(model)
    return model, steps, outputs, jacobians, ask_neml2(tmp_path_factory.mktemp("forest"), steps)


def test_the_densities_grow_on_the_active_slip_systems(run: tuple) -> None:
    model, steps, outputs, _, _ = run
    grown = outputs[-1][DENSITY] - steps[0][f"{DENSITY}~1"]
    assert grown.shape == (1, NSLIP)
    assert int((grown > 0.1).sum()) >= 4  # several systems slip and store dislocations
    assert float(grown.min()) >= 0.0
    assert model.variable(DENSITY).sub_batch == (NSLIP,)


def test_the_line_search_solve_agrees_with_neml2_at_every_step(run: tuple) -> None:
    _, _, outputs, _, theirs = run
    answered = theirs["steps"]
    assert len(answered) == STEPS
    for step, (ours, their) in enumerate(zip(outputs, answered, strict=True)):
        both = their["outputs"]
        for name, value in both.items():  # the two copies of the point agree (to round-off)
            torch.testing.assert_close(value[0, 0], value[0, 1], rtol=1e-12, atol=0, msg=name)
        assert_agree(ours, first(both), f"step {step + 1} outputs")


@pytest.mark.parametrize("step", [12, 20])
def test_the_jacobians_agree_with_differences(run: tuple, step: int) -> None:
    model, steps, _, jacobians, _ = run
    # every block (the densities' full (12, 12) ones included), with a step small enough
    # for this stiff system (the differences' error ~ h^2)
    check_by_differences(model, steps[step - 1], f"step {step}", step=1e-7)
    # the Jacobian of the solve that drove the steps is the one checked
    for of, row in model.jacobian(steps[step - 1]).items():
        for wrt, block in row.items():
            torch.testing.assert_close(block, jacobians[step - 1][of][wrt], rtol=1e-12, atol=0)
