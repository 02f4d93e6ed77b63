"""NewtonWithLineSearch and CrystalPlasticityStrainPredictor against NEML2 3.1.0, on a
single crystal without sub-batched unknowns (tests/neml2_inputs/crystal/line_search_crystal.i):
one step from rest at one point, solved with a backtracking and with a strong-Wolfe line
search whose options all differ from NEML2's defaults; the outputs and the Jacobians at
rtol 1e-8. The strain predictor is also evaluated on its own.

The line search cuts back at this loading (the full Newton step from the predicted strain
raises the residual nearly sixfold), and the solves stop at a loose tolerance, so a result
depends on every step length the search chose: changing any one line-search option moves
it by far more than the comparison's tolerance, so agreeing with NEML2 pins each option.

NEML2 3.1.0's line search raises IndexError unless the call has a batch of two points, so
each update's point goes to it twice, as a batch of two (as in test_crystal_forest.py).
NEML2 does not differentiate predictors (its CrystalPlasticityStrainPredictor returns zero
derivative blocks), so the predictor's Jacobians are checked by central differences.
"""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from neml2.errors import Neml2Error
from neml2.models import Model
from neml2.solvers import LineSearch

from .conftest import REPO
from .oracle import (  # noqa: F401 (oracle_folder: a fixture)
    RTOL,
    Case,
    answers,
    check_by_differences,
    oracle_folder,
    parameter_jacobian_by_differences,
)
from .test_neml2_oracle import assert_agree

FILE = REPO / "tests" / "neml2_inputs" / "crystal" / "line_search_crystal.i"
UPDATES = ("backtracking", "wolfe")
STATE = ("elastic_strain", "slip_hardening", "orientation")
F64 = torch.float64

#: one step of 0.5 s from rest: tension with shear and a small spin; the guesses of the
#: unknowns [wolfe] does not predict are the values at the start of the step
STEP = {
    "deformation_rate": 1e-3 * torch.tensor([[1.0, -0.5, -0.5, 0.1, 0.0, 0.2]], dtype=F64),
    "vorticity": 1e-3 * torch.tensor([[1.0, -2.0, 0.5]], dtype=F64),
    "t": torch.tensor([0.5], dtype=F64),
    "t~1": torch.tensor([0.0], dtype=F64),
    "elastic_strain~1": torch.zeros(1, 6, dtype=F64),
    "slip_hardening~1": torch.zeros(1, dtype=F64),
    "orientation~1": torch.tensor([[0.3, 0.1, -0.2]], dtype=F64),
    "slip_hardening": torch.zeros(1, dtype=F64),
    "orientation": torch.tensor([[0.3, 0.1, -0.2]], dtype=F64),
}

#: the strain predictor at three points: at rest, with a small old strain (both below the
#: threshold 2e-4, so predicted), and with an old strain above it (passed on)
PREDICTOR = Case(
    FILE,
    {
        "deformation_rate": 1e-3
        * torch.tensor(
            [
                [1.0, -0.5, -0.5, 0.1, 0.0, 0.2],
                [-0.3, 0.8, -0.5, 0.0, 0.4, -0.1],
                [0.5, 0.5, -1.0, 0.2, -0.3, 0.0],
            ],
            dtype=F64,
        ),
        "t": torch.tensor([0.5, 2.0, 1.0], dtype=F64),
        "t~1": torch.tensor([0.0, 1.75, 0.5], dtype=F64),
        "elastic_strain~1": torch.tensor(
            [
                [0.0] * 6,
                [2e-5, -1e-5, -1e-5, 3e-5, 0.0, 1e-5],
                [6e-4, -3e-4, -3e-4, 1e-4, 2e-4, 0.0],
            ],
            dtype=F64,
        ),
    },
    model="strain_guess",
)


def build(name: str) -> Model:
    return Case(FILE, model=name).build()


def inputs(model: Model) -> dict[str, torch.Tensor]:
    return {v.name: STEP[v.name] for v in model.inputs}


def twice(x: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """A point as NEML2's line search takes it: ``(1, 2, ...)``, the point twice."""
    return {k: v.expand(2, *v.shape[1:]).unsqueeze(0) for k, v in x.items()}


def first(tree: dict) -> dict:
    """A NEML2 answer ``(1, 2, ...)`` as our ``(1, ...)``: the first copy of the point."""
    return {k: first(v) if isinstance(v, dict) else v[0, :1] for k, v in tree.items()}


def relative_change(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> float:
    """The largest change of a variable of ``a`` from ``b``, relative to the largest
    component of that variable in ``b``."""
    return max(float((a[k] - b[k]).abs().max() / b[k].abs().max()) for k in b)


#: the line searches line_search_crystal.i asks for, every option off NEML2's default
#: (BACKTRACKING, 10 iterations, cutback 2, stopping criterion 1e-3)
SEARCHES = {
    "backtracking": LineSearch("BACKTRACKING", 4, 1.5, 0.08),
    "wolfe": LineSearch("STRONG_WOLFE", 3, 3.0, 0.3),
}


@pytest.fixture(scope="module")
def theirs(oracle_folder):  # noqa: F811 (the imported fixture)
    """NEML2's answers, from one oracle process: each update, then the predictor."""
    cases = [Case(FILE, twice(inputs(build(name))), model=name) for name in UPDATES]
    found = answers(oracle_folder, [*cases, PREDICTOR])
    return dict(zip([*UPDATES, "predictor"], found, strict=True))


@pytest.mark.parametrize("name", UPDATES)
def test_the_first_full_newton_step_raises_the_residual(name: str) -> None:
    model = build(name)
    x = inputs(model)
    given = {v.name: x[v.name] for v in model.givens}
    predicted = model.predictor.forward({v.name: x[v.name] for v in model.predictor.inputs})
    assert set(predicted) == ({"elastic_strain"} if name == "wolfe" else set(STATE))
    guess = {**x, **predicted}
    # the predictor is active at rest: the guess is scale (t - t~1) d, not the old strain
    torch.testing.assert_close(
        guess["elastic_strain"], 0.8 * 0.5 * x["deformation_rate"], rtol=1e-15, atol=0
    )
    u = torch.cat([guess[v.name].reshape(1, -1) for v in model.unknowns], -1)
    _, r, J = model._system(given, u, model.parameters)
    du = -torch.linalg.solve(J, r.unsqueeze(-1)).squeeze(-1)
    _, full, _ = model._system(given, u + du, model.parameters)
    # a full step would raise the residual many times over, so the search must cut it back
    assert float(full.norm()) > 5 * float(r.norm())


@pytest.mark.parametrize("name", UPDATES)
def test_the_update_agrees_with_neml2(name: str, theirs: dict) -> None:
    model = build(name)
    answer = theirs[name]
    assert "error" not in answer, f"NEML2 refused {name}: {answer['error']}"
    # the unknowns the predictor leaves out are inputs of the update, in NEML2 too
    assert set(answer["inputs"]) == {v.name for v in model.inputs}
    guessed = {"slip_hardening", "orientation"} & set(answer["inputs"])
    assert guessed == (set() if name == "backtracking" else {"slip_hardening", "orientation"})
    for key in ("outputs", "jacobian"):  # the two copies of the point agree (to round-off)
        rows = answer[key] if key == "jacobian" else {"": answer[key]}
        for row in rows.values():
            for what, value in row.items():
                torch.testing.assert_close(value[0, 0], value[0, 1], rtol=1e-12, atol=0, msg=what)
    ev = model.evaluate(inputs(model), model.parameters, jacobian=True)
    assert bool(ev.status.converged.all())
    assert set(ev.outputs) == set(STATE)
    # rtol 1e-8, as for every crystal test: both sides take the same iterates, which differ
    # only by round-off (~1e-13 relative), and a different step length anywhere moves the
    # result by more than 1e-6 (test_each_line_search_option_changes_the_answer)
    assert_agree(ev.outputs, first(answer["outputs"]), f"{name} outputs")
    assert_agree(ev.jacobian, first(answer["jacobian"]), f"{name} jacobian")


def other_kind(search: LineSearch) -> str:
    return "STRONG_WOLFE" if search.kind == "BACKTRACKING" else "BACKTRACKING"


#: each option of the file's line search changed, NEML2's default among the changes;
#: ``max_iterations = 1`` is plain Newton
CHANGES = {
    "default-max-iterations": lambda s: {"max_iterations": 10},
    "one-more-trial": lambda s: {"max_iterations": s.max_iterations + 1},
    "one-less-trial": lambda s: {"max_iterations": s.max_iterations - 1},
    "plain-newton": lambda s: {"max_iterations": 1},
    "default-cutback": lambda s: {"cutback": 2.0},
    "default-stopping-criteria": lambda s: {"stopping_criteria": 1e-3},
    "other-kind": lambda s: {"kind": other_kind(s)},
}


@pytest.mark.parametrize("change", CHANGES)
@pytest.mark.parametrize("name", UPDATES)
def test_each_line_search_option_changes_the_answer(name: str, change: str) -> None:
    model = build(name)
    search = model.solver.line_search
    assert search == SEARCHES[name]
    x = inputs(model)
    ours = model.forward(x)
    changed = dataclasses.replace(search, **CHANGES[change](search))
    model.solver = dataclasses.replace(model.solver, line_search=changed)
    ev = model.evaluate(x, model.parameters)
    # a changed search that does not converge within max_its (the file's does), which NEML2
    # would raise on, differs as plainly as a moved answer
    converged = bool(ev.status.converged.all())
    moved = relative_change(ev.outputs, ours) if converged else math.inf
    # far beyond the 1e-8 at which the update agrees with NEML2: a search that read this
    # option otherwise than NEML2 would fail that comparison
    assert moved > 100 * RTOL, f"{change}: the answer moved by {moved:.1e} only"


def test_an_unknown_not_predicted_is_a_required_input() -> None:
    model = build("wolfe")
    x = inputs(model)
    del x["orientation"]
    with pytest.raises(Neml2Error, match="missing input 'orientation'"):
        model.forward(x)


def test_the_predictor_agrees_with_neml2(theirs: dict) -> None:
    answer = theirs["predictor"]
    assert "error" not in answer, f"NEML2 refused the predictor: {answer['error']}"
    model = PREDICTOR.build()
    x = dict(PREDICTOR.inputs)
    ours = model.forward(x)
    assert_agree(ours, answer["outputs"], "strain_guess outputs")
    # below the threshold the strain is predicted, above it the old one is passed on
    old, strain = x["elastic_strain~1"], ours["elastic_strain"]
    dt = (x["t"] - x["t~1"]).unsqueeze(-1)
    torch.testing.assert_close(strain[:2], (old + 0.8 * dt * x["deformation_rate"])[:2])
    assert torch.equal(strain[2], old[2])
    assert not torch.equal(strain[:2], old[:2])


def test_the_predictor_jacobians_agree_with_differences(theirs: dict) -> None:
    answer = theirs["predictor"]
    # NEML2 3.1.0 does not differentiate a predictor: every block it gives is zero, so its
    # Jacobian is no reference (ours is the derivative of the branch taken)
    blocks = [b for row in answer["jacobian"].values() for b in row.values()]
    assert blocks
    assert all(not b.any() for b in blocks)
    model = PREDICTOR.build()
    x = dict(PREDICTOR.inputs)
    jac = model.jacobian(x)
    assert jac["elastic_strain"]["deformation_rate"].abs().max() > 0.1
    check_by_differences(model, x, "strain_guess")
    parameter_jacobian_by_differences(model, x, "strain_guess", atol=1e-12, scaled=False)
