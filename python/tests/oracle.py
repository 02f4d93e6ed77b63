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
from neml2.models import Model
from neml2.models.sub_batch import build_with_settings

from .test_neml2_oracle import (
    LAYOUT_BUGS,
    ORACLE,
    ORACLE_ATTEMPTS,
    assert_agree,
    oracle_env,
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
    #: sub-batch axes given beside the file's [Settings] (variable name -> axes): per-point
    #: axes that NEML2 sees as dynamic batch axes (SR2DynamicMean's, for instance)
    sub_batch: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    #: ask NEML2 for its dense Jacobian column by column (its ``jvp`` along each component
    #: of each input), for stencils along a sub-batch axis that its ``jacobian`` cannot seed
    dense: bool = False

    def __post_init__(self) -> None:
        if not self.batch:
            sizes = {int(v.shape[0]) for v in self.inputs.values()}
            assert len(sizes) <= 1, f"{self.file.name}: inputs disagree on the batch size"
            self.batch = sizes.pop() if sizes else 1

    @property
    def id(self) -> str:
        # a fixture's model.i is named after its folder
        return self.file.parent.name if self.file.stem == "model" else self.file.stem

    def build(self) -> Model:
        return build_with_settings(hit.load(self.file), self.model, self.sub_batch)


def answers(folder: Path, cases: Sequence[Case]) -> list[dict]:
    """NEML2's answer to every case: ``{"outputs", "jacobian"}`` of its one step, or
    ``{"error": message}`` where NEML2 refused the case."""
    requests = [
        {
            "file": str(c.file),
            "model": c.model,
            "batch": c.batch,
            "steps": [dict(c.inputs)],
            "jvp_columns": c.dense,
            # axes given beside the file are the ones NEML2 calls dynamic
            "sub_batch_ndim": {
                v.name: len(v.sub_batch)
                for v in c.build().inputs
                if v.sub_batch and v.name not in c.sub_batch
            },
        }
        for c in cases
    ]
    return [r["steps"][0] if "steps" in r else r for r in requested(folder, requests)]


def requested(folder: Path, requests: Sequence[dict]) -> list[dict]:
    """NEML2's answer to every request (the oracle's case format): ``{"steps": [...]}``, or
    ``{"error": message}`` where NEML2 refused it.

    A request that met NEML2's intermittent layout fault past the oracle's own retries (a
    process that met the fault may keep meeting it) is asked again in a fresh oracle
    process; the answers of the others are kept.
    """
    result: list[dict] = [{"error": LAYOUT_BUGS[0]} for _ in requests]
    for _ in range(ORACLE_ATTEMPTS):
        again = [i for i, r in enumerate(result) if layout_fault(r.get("error", ""))]
        if not again:
            break
        for i, r in zip(again, ask(folder, [requests[i] for i in again]), strict=True):
            result[i] = r
    return result


def layout_fault(message: str) -> bool:
    """Whether ``message`` is NEML2 3.1.0's intermittent layout fault."""
    return any(bug in message for bug in LAYOUT_BUGS)


def ask(folder: Path, requests: Sequence[dict]) -> list[dict]:
    """NEML2's answer to every request, from one oracle process; a process that crashed
    on the layout fault answers every request with it."""
    request, result = folder / "request.pt", folder / "result.pt"
    torch.save({"cases": list(requests)}, request)
    done = subprocess.run(
        [oracle_python(), str(ORACLE), str(request), str(result)],
        capture_output=True,
        text=True,
        check=False,
        env=oracle_env(),
    )
    if done.returncode and layout_fault(done.stderr):
        return [{"error": done.stderr[-2000:]} for _ in requests]
    assert done.returncode == 0, f"the NEML2 oracle failed: {done.stderr[-3000:]}"
    cases: list[dict] = torch.load(result)["cases"]
    return cases


def unit_test_answers(folder: Path, files: Sequence[Path]) -> list[dict]:
    """NEML2's own ModelUnitTest driver on every file (its value checks), from one oracle
    process: ``{"values": outputs checked}``, or ``{"error": message}`` where it failed."""
    request, result = folder / "unit_request.pt", folder / "unit_result.pt"
    torch.save({"unit_tests": [str(f) for f in files]}, request)
    done = subprocess.run(
        [oracle_python(), str(ORACLE), str(request), str(result)],
        capture_output=True,
        text=True,
        check=False,
        env=oracle_env(),
    )
    assert done.returncode == 0, f"the NEML2 oracle failed: {done.stderr[-3000:]}"
    return torch.load(result)["unit_tests"]


def full_jacobian(model: Model, x: Mapping[str, torch.Tensor]) -> dict:
    """Our Jacobian, every block ``(B, *of, *wrt)``: an unbatched block repeated."""
    batch = next(iter(x.values())).shape[0] if x else 1
    out: dict = {}
    for of, row in model.jacobian(x).items():
        out[of] = {}
        for wrt, block in row.items():
            shape = (*model.variable(of).shape, *model.variable(wrt).shape)
            out[of][wrt] = block if block.dim() > len(shape) else block.expand(batch, *shape)
    return out


def as_neml2_writes(model: Model, ours: dict, theirs: dict) -> dict:
    """Our full Jacobian in the layout of NEML2's blocks (which may carry size-1 axes).

    Where ``wrt`` has sub-batch axes, NEML2 seeds one direction per base component, the
    same along every sub-batch entry: its block is ours summed over ``wrt``'s sub-batch
    axes. In a model with sub-batch axes its blocks may also be repeated along one more
    leading axis. Only that sum is comparable, so
    :func:`check` also verifies such models' full blocks by differences.
    """
    out: dict = {}
    for of, row in ours.items():
        out[of] = {}
        for wrt, block in row.items():
            var_of, sub = model.variable(of), model.variable(wrt).sub_batch
            want = theirs.get(of, {}).get(wrt, block)
            if sub:
                first = 1 + len(var_of.shape)
                block = block.sum(dim=tuple(range(first, first + len(sub))))
            repeats = want.numel() // max(block.numel(), 1)
            if repeats > 1 and want.numel() == block.numel() * repeats:
                copies = want.reshape(block.shape[0], repeats, -1)
                assert torch.equal(copies, copies[:, :1].expand_as(copies)), (
                    f"NEML2's d{of}/d{wrt} differs along its repeated axis"
                )
                theirs[of][wrt] = want = copies[:, 0].reshape(block.shape)
            same = [d for d in want.shape if d != 1] == [d for d in block.shape if d != 1]
            out[of][wrt] = block.reshape(want.shape) if same else block
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
    if not x:
        return
    if "jacobian_error" in theirs:
        # NEML2 3.1.0 computes this model's values but fails on its Jacobian: ours is
        # checked against central differences of our own (oracle-checked) values instead
        check_by_differences(model, x, case.id)
        return
    if theirs.get("dense"):
        # NEML2's dense blocks (B, of size, wrt size), column by column from its jvp
        ours_jac = full_jacobian(model, x)
        for of, row in ours_jac.items():
            for wrt, block in row.items():
                want = theirs["jacobian"][of][wrt]
                assert want.numel() == block.numel(), f"{case.id} d{of}/d{wrt}: {want.shape}"
                theirs["jacobian"][of][wrt] = want.reshape(block.shape)
        assert_agree(ours_jac, theirs["jacobian"], f"{case.id} jacobian")
        return
    ours_jac = as_neml2_writes(model, full_jacobian(model, x), theirs["jacobian"])
    assert_agree(ours_jac, theirs["jacobian"], f"{case.id} jacobian")
    if any(v.sub_batch for v in model.inputs):
        check_by_differences(model, x, case.id)


def check_by_differences(
    model: Model, x: Mapping[str, torch.Tensor], what: str, step: float = 1e-6
) -> None:
    """Every Jacobian block of ``model`` at ``x`` agrees with central differences of its
    forward (rtol 1e-6, so exact derivatives of smooth models pass and wrong ones fail)."""
    jac = model.jacobian(dict(x))
    for wrt, value in x.items():
        flat = value.reshape(value.shape[0], -1)
        for j in range(flat.shape[1]):
            h = step * max(1.0, float(flat[:, j].abs().max()))
            plus, minus = flat.clone(), flat.clone()
            plus[:, j] += h
            minus[:, j] -= h
            up = model.forward({**x, wrt: plus.reshape(value.shape)})
            down = model.forward({**x, wrt: minus.reshape(value.shape)})
            for of, hi in up.items():
                block = jac[of][wrt]
                var = model.variable(of)
                if block.dim() == len(var.shape) + len(model.variable(wrt).shape):
                    block = block.expand(value.shape[0], *block.shape)
                column = block.reshape(value.shape[0], var.size, -1)[:, :, j]
                difference = ((hi - down[of]) / (2 * h)).reshape(value.shape[0], -1)
                torch.testing.assert_close(
                    column, difference, rtol=1e-6, atol=1e-6, msg=f"{what} d{of}/d{wrt}[{j}]"
                )


@pytest.fixture(scope="module")
def oracle_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder for one module's oracle request and result."""
    return tmp_path_factory.mktemp("oracle")


def parameter_differences(
    model: Model, x: Mapping[str, torch.Tensor], name: str
) -> dict[str, torch.Tensor]:
    """d(output)/d(parameter ``name``) of every output of ``model`` at ``x`` by central
    differences, ``(*output, *parameter)`` with the output's batch axis if it has one.

    Each component moves by ``h = 1e-6 max(1, max |parameter|)``, in place (so composed,
    sub-batched and implicit models, which share their parameter tensors, see the change),
    and the parameter is restored exactly.
    """
    value = model.named_parameters()[name]
    saved = value.clone()
    h = 1e-6 * max(1.0, float(saved.abs().max())) if saved.numel() else 1e-6
    columns: dict[str, list[torch.Tensor]] = {}
    try:
        for j in range(saved.numel()):
            results = []
            for step in (h, -h):
                moved = saved.clone()
                moved.view(-1)[j] += step
                value.copy_(moved)
                results.append(model.forward(dict(x)))
            for out, plus in results[0].items():
                columns.setdefault(out, []).append((plus - results[1][out]) / (2 * h))
    finally:
        value.copy_(saved)
    return {
        out: torch.stack(cols, dim=-1).reshape((*cols[0].shape, *saved.shape))
        for out, cols in columns.items()
    }


def parameter_jacobian_by_differences(
    model: Model,
    x: Mapping[str, torch.Tensor],
    what: str = "",
    *,
    atol: float = 1e-6,
    scaled: bool = True,
) -> None:
    """Every parameter Jacobian block of ``model`` at ``x`` agrees with
    :func:`parameter_differences`, component by component (rtol 1e-6).

    ``atol`` is absolute, or, where ``scaled``, a multiple of ``max(1, max |difference|)``
    of the component. A point-independent block (unbatched) or the unbatched output of a
    model without inputs is compared at every point.
    """
    pjac = model.param_jacobian(dict(x))
    for name, value in model.parameters.items():
        differences = parameter_differences(model, x, name)
        count = max(1, value.numel())
        for out, row in pjac.items():
            size = model.variable(out).size
            want = differences[out].reshape(-1, size, count)
            have = row[name].reshape(-1, size, count)
            points = max(want.shape[0], have.shape[0])
            for j in range(value.numel()):
                expected = want[..., j]
                tolerance = atol * max(1.0, float(expected.abs().max())) if scaled else atol
                torch.testing.assert_close(
                    have[..., j].expand(points, size),
                    expected.expand(points, size),
                    rtol=1e-6,
                    atol=tolerance,
                    msg=f"{what} d{out}/d{name}[{j}]",
                )
