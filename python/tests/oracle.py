"""NEML2 3.1.0 as the oracle for a family of model types, one child process per family.

A test module lists its cases (an input file of its own and the batched inputs to
evaluate it at), asks :func:`answers` once for NEML2's outputs and Jacobians of every
case, and compares each with our eager model through :func:`check`. The oracle runs in
the environment of ``.venv-neml2`` (see test_neml2_oracle.py for how it is found).
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch

from neml2 import hit
from neml2.models import Model, build_model, model_section

from .test_neml2_oracle import (
    LAYOUT_BUGS,
    ORACLE,
    ORACLE_ATTEMPTS,
    assert_agree,
    oracle_python,
)

RTOL = 1e-8


@dataclass
class Case:
    """One input file evaluated at one batch of inputs; ``id`` names it in reports."""

    file: Path
    inputs: Mapping[str, torch.Tensor] = field(default_factory=dict)
    model: str = "model"
    batch: int = 0

    def __post_init__(self) -> None:
        if not self.batch:
            sizes = {int(v.shape[0]) for v in self.inputs.values()}
            assert len(sizes) <= 1, f"{self.file.name}: inputs disagree on the batch size"
            self.batch = sizes.pop() if sizes else 1

    @property
    def id(self) -> str:
        return self.file.stem

    def build(self) -> Model:
        return build_model(model_section(hit.load(self.file), self.model))


def answers(folder: Path, cases: Sequence[Case]) -> list[dict]:
    """NEML2's answer to every case, from one oracle process: ``{"outputs", "jacobian"}``
    of its one step, or ``{"error": message}`` where NEML2 refused the case."""
    python = oracle_python()
    request, result = folder / "request.pt", folder / "result.pt"
    torch.save(
        {
            "cases": [
                {
                    "file": str(c.file),
                    "model": c.model,
                    "batch": c.batch,
                    "steps": [dict(c.inputs)],
                }
                for c in cases
            ]
        },
        request,
    )
    for _ in range(ORACLE_ATTEMPTS):
        done = subprocess.run(
            [python, str(ORACLE), str(request), str(result)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode == 0 or not any(bug in done.stderr for bug in LAYOUT_BUGS):
            break
    assert done.returncode == 0, f"the NEML2 oracle failed: {done.stderr[-3000:]}"
    return [c["steps"][0] if "steps" in c else c for c in torch.load(result)["cases"]]


def full_jacobian(model: Model, x: Mapping[str, torch.Tensor]) -> dict:
    """Our Jacobian as NEML2 writes it: every block ``(B, *of, *wrt)``, an unbatched block
    repeated over the batch, and a sub-batch axis of ``wrt`` summed (NEML2 seeds one
    direction per base component, the same along every sub-batch entry)."""
    batch = next(iter(x.values())).shape[0] if x else 1
    jac = model.jacobian(x)
    out: dict = {}
    for of, row in jac.items():
        out[of] = {}
        for wrt, block in row.items():
            var_of, var_wrt = model.variable(of), model.variable(wrt)
            shape = (*var_of.shape, *var_wrt.shape)
            if block.dim() == len(shape):
                block = block.expand(batch, *shape)
            sub = getattr(var_wrt, "sub_batch", ())
            if sub:
                first = 1 + len(var_of.shape)
                block = block.sum(dim=tuple(range(first, first + len(sub))))
            out[of][wrt] = block
    return out


def check(case: Case, theirs: dict, model: Model | None = None) -> None:
    """Our eager outputs and Jacobian of ``case`` agree with NEML2's at rtol 1e-8."""
    assert "error" not in theirs, f"NEML2 refused {case.id}: {theirs['error']}"
    model = model or case.build()
    x = dict(case.inputs)
    ours = model.forward(x)
    if not x:
        ours = {k: v.expand(case.batch, *v.shape) for k, v in ours.items()}
    assert_agree(ours, theirs["outputs"], f"{case.id} outputs")
    if x:
        assert_agree(full_jacobian(model, x), theirs["jacobian"], f"{case.id} jacobian")


@pytest.fixture(scope="module")
def oracle_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder for one module's oracle request and result."""
    return tmp_path_factory.mktemp("oracle")
