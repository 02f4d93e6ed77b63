"""Single-crystal plasticity solved by ImplicitUpdate (elastic strain, slip hardening and
orientation as unknowns), driven over 20 steps, each from the state the previous one
left, against NEML2 3.1.0 at every step: outputs and Jacobians at rtol 1e-8."""

from __future__ import annotations

from pathlib import Path

import torch

from neml2 import hit
from neml2.models import Model
from neml2.models.base import raise_if_failed
from neml2.models.sub_batch import build_with_settings

from .conftest import REPO
from .oracle import requested
from .test_neml2_oracle import assert_agree

#: the single-crystal model, also the C++ tests' compiled fixture (tests/aoti/test_crystal.cpp)
SINGLE_CRYSTAL = REPO / "tests" / "aoti" / "crystal" / "model.i"
#: one point: NEML2's eager solve of every step dominates this module's run time
B = 1
STEPS = 20
STATE = ("elastic_strain", "slip_hardening", "orientation")


def build(path: Path) -> Model:
    return build_with_settings(hit.load(path), "model")


def loading(step: int) -> dict[str, torch.Tensor]:
    """Tension with shear and a small spin, ramped up over the first steps; 0.5 s each."""
    level = min(step, 8) / 8
    scale = torch.ones((B, 1), dtype=torch.float64)
    d = torch.tensor([1.0, -0.5, -0.5, 0.1, 0.0, 0.2], dtype=torch.float64)
    w = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    return {
        "deformation_rate": 1.2e-3 * level * scale * d,
        "vorticity": 1e-4 * scale * w,
        "t": torch.full((B,), 0.5 * step, dtype=torch.float64),
        "t~1": torch.full((B,), 0.5 * (step - 1), dtype=torch.float64),
    }


def drive(model: Model) -> tuple[list[dict], list[dict], list[dict]]:
    """Our model over STEPS steps: the inputs, outputs and full Jacobians of each."""
    state = {
        "elastic_strain": torch.zeros(B, 6, dtype=torch.float64),
        "slip_hardening": torch.zeros(B, dtype=torch.float64),
        "orientation": torch.tensor([[0.3, 0.1, -0.2]], dtype=torch.float64),
    }
    steps, outputs, jacobians = [], [], []
    names = {v.name for v in model.inputs}
    for step in range(1, STEPS + 1):
        x = {**loading(step), **{f"{k}~1": v for k, v in state.items()}}
        x.update({k: v for k, v in state.items() if k in names})  # guesses, where taken
        x = {k: v for k, v in x.items() if k in names}
        # one solve gives the outputs and the Jacobian
        ev = model.evaluate(x, model.parameters, jacobian=True)
        raise_if_failed(model.name, ev.status)
        out = ev.outputs
        steps.append(x)
        outputs.append(out)
        jacobians.append(ev.jacobian)
        state = {k: out[k] for k in STATE}
    return steps, outputs, jacobians


def neml2_steps(folder: Path, path: Path, steps: list[dict]) -> list[dict]:
    """NEML2's outputs and Jacobians of every step, ``(B, ...)``.

    Every step's inputs are known before NEML2 sees them (this model's own drive made
    them), so each point of each step goes as a case of its own. NEML2 3.1.0's eager
    Newton solve raises IndexError on an SR2 unknown at an unbatched point: each case's
    inputs carry one more axis, so that NEML2 sees a batch of one. A case that met the
    extension's intermittent layout fault is asked again in a fresh oracle process (a
    process that met it may keep meeting it), the others are kept.
    """
    cases = [
        {
            "file": str(path),
            "model": "model",
            "batch": 1,
            "steps": [{k: v[b : b + 1].unsqueeze(0) for k, v in x.items()}],
        }
        for x in steps
        for b in range(B)
    ]
    answered = requested(folder, cases)
    for case in answered:
        assert "error" not in case, f"NEML2 failed on {path.name}: {case['error']}"

    def joined(parts: list) -> object:
        if isinstance(parts[0], dict):
            return {k: joined([p[k] for p in parts]) for k in parts[0]}
        return torch.cat([p.reshape(p.shape[1:]) for p in parts])

    return [
        joined(
            [
                {k: c["steps"][0][k] for k in ("outputs", "jacobian")}
                for c in answered[i * B : (i + 1) * B]
            ]
        )
        for i in range(len(steps))
    ]


def test_single_crystal_over_steps_agrees_with_neml2(tmp_path: Path) -> None:
    model = build(SINGLE_CRYSTAL)
    steps, outputs, jacobians = drive(model)
    # the crystal yields: the slip hardening grows from zero
    assert float(outputs[-1]["slip_hardening"].min()) > 1.0
    theirs = neml2_steps(tmp_path, SINGLE_CRYSTAL, steps)
    assert len(theirs) == STEPS
    for step, (ours, jac, their) in enumerate(zip(outputs, jacobians, theirs, strict=True)):
        assert_agree(ours, their["outputs"], f"step {step + 1} outputs")
        assert_agree(jac, their["jacobian"], f"step {step + 1} jacobian")
