"""The [Solvers] block: settings, defaults, and every error at its line."""

from __future__ import annotations

import pytest
import torch

from neml2 import hit
from neml2.errors import HitError
from neml2.solvers import LineSearch, Newton, newton_loop, solve_per_point, solver_for

MODEL = "[Models]\n  [model]\n    type = J2Viscoplasticity\n    solver = newton\n  []\n[]\n"


def newton(*lines: str, name: str = "newton") -> str:
    body = "".join(f"    {line}\n" for line in lines)
    return f"[Solvers]\n  [{name}]\n{body}  []\n[]\n"


def solver(block: str, model: str = MODEL) -> Newton:
    root = hit.parse(f"{block}{model}", "s.i")
    return solver_for(root.children["Models"].children["model"])


def test_settings() -> None:
    block = newton("type = Newton", "abs_tol = 1e-9", "rel_tol = 0", "max_its = 7")
    assert solver(block) == Newton(abs_tol=1e-9, rel_tol=0.0, max_its=7)


def test_defaults() -> None:
    assert solver(newton("type = Newton")) == Newton()
    assert solver("", MODEL.replace("    solver = newton\n", "")) == Newton(1e-10, 1e-8, 20)


NO_SOLVERS = "the file has no [Solvers] block"


@pytest.mark.parametrize(
    ("block", "line", "message"),
    [
        (
            "",
            4,
            f"[Models/model]: unknown solver 'newton': expected [Solvers/newton]; {NO_SOLVERS}",
        ),
        (
            newton("type = Newton", name="other"),
            9,
            "unknown solver 'newton': expected [Solvers/newton]; solvers defined: other",
        ),
        (newton(), 2, "[Solvers/newton]: missing required parameter 'type'"),
        (
            newton("type = Broyden"),
            3,
            "unknown solver type 'Broyden'; known types: Newton, NewtonWithLineSearch, DenseLU",
        ),
        (
            newton("type = Newton", "atol = 1"),
            4,
            "unknown parameter 'atol' for Newton; expected one of: abs_tol, linear_solver, "
            "max_its, rel_tol, substep_del_tol",
        ),
        (
            newton("type = Newton", "abs_tol = -1"),
            4,
            "parameter 'abs_tol': expected a value >= 0, got -1",
        ),
        (
            newton("type = Newton", "rel_tol = 1e-8x"),
            4,
            "parameter 'rel_tol': expected a number, got '1e-8x'",
        ),
        (
            newton("type = Newton", "max_its = 0"),
            4,
            "parameter 'max_its': expected an integer >= 1, got 0",
        ),
        (
            newton("type = Newton", "max_its = 2.5"),
            4,
            "parameter 'max_its': expected an integer, got '2.5'",
        ),
        (
            newton("type = Newton", "abs_tol = 0", "rel_tol = 0"),
            4,
            "parameters 'abs_tol' and 'rel_tol' are both 0: no point could converge",
        ),
    ],
)
def test_errors(block: str, line: int, message: str) -> None:
    """Each mistake in a [Solvers] block is one message at its line."""
    with pytest.raises(HitError) as info:
        solver(block)
    assert message in info.value.message
    assert (info.value.path, info.value.line) == ("s.i", line)


def test_the_loop_stops_when_every_point_is_done_and_caps_the_updates() -> None:
    """Halving until below 1: a point needing k halvings is done after k updates."""

    def step(
        z: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        done = z < 1
        return torch.where(done, z, z / 2), lo + 1, hi, done

    z = torch.tensor([0.5, 3.0, 100.0])
    counts = torch.zeros(3)
    out = newton_loop(step, z, counts, counts.clone(), torch.zeros(3, dtype=torch.bool), 20)
    assert out.tolist() == [0.5, 0.75, 0.78125]
    capped = newton_loop(step, z, counts, counts.clone(), torch.zeros(3, dtype=torch.bool), 3)
    assert capped.tolist() == [0.5, 0.75, 12.5]


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_the_per_point_solve_is_the_dense_solve(n: int) -> None:
    g = torch.Generator().manual_seed(n)
    A = torch.randn(64, n, n, generator=g, dtype=torch.float64) + 3 * torch.eye(n)
    b = torch.randn(64, n, 4, generator=g, dtype=torch.float64)
    x = solve_per_point(A, b)
    assert x.shape == (64, n, 4)
    torch.testing.assert_close(x, torch.linalg.solve(A, b), rtol=1e-11, atol=1e-12)
    # a point's answer does not depend on the batch it is solved in
    assert torch.equal(solve_per_point(A[5:6], b[5:6]), x[5:6])
    assert torch.equal(solve_per_point(A.flip(0), b.flip(0)).flip(0), x)


def test_the_per_point_solve_pivots_and_marks_singular_points() -> None:
    # a zero first pivot needs a row exchange; a singular matrix gives non-finite values
    A = torch.tensor([[[0.0, 2.0], [3.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]], dtype=torch.float64)
    b = torch.tensor([[[4.0], [5.0]], [[1.0], [1.0]]], dtype=torch.float64)
    x = solve_per_point(A, b)
    assert x[0].flatten().tolist() == [1.0, 2.0]
    assert not bool(torch.isfinite(x[1]).all())


IMPLICIT = "[Models]\n  [model]\n    type = ImplicitUpdate\n    solver = newton\n  []\n[]\n"


def implicit_solver(block: str) -> Newton:
    """The solver an ImplicitUpdate block names (the one model that runs a line search)."""
    root = hit.parse(f"{block}{IMPLICIT}", "s.i")
    return solver_for(root.children["Models"].children["model"], line_search=True)


def test_line_search_settings_and_defaults() -> None:
    assert implicit_solver(newton("type = NewtonWithLineSearch")) == Newton(
        line_search=LineSearch("BACKTRACKING", 10, 2.0, 1e-3)
    )
    block = newton(
        "type = NewtonWithLineSearch",
        "max_its = 9",
        "linesearch_type = STRONG_WOLFE",
        "max_linesearch_iterations = 4",
        "linesearch_cutback = 3",
        "linesearch_stopping_criteria = 0.01",
        "check_negative_criterion = true",
    )
    found = implicit_solver(block)
    assert found == Newton(max_its=9, line_search=LineSearch("STRONG_WOLFE", 4, 3.0, 0.01))
    assert found.searches
    assert found.line_search is not None
    assert found.line_search.trials == 3
    # one trial per update is every full Newton update: no search
    assert not implicit_solver(
        newton("type = NewtonWithLineSearch", "max_linesearch_iterations = 1")
    ).searches
    assert not Newton().searches


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            ("linesearch_type = GOLDEN",),
            "parameter 'linesearch_type': expected one of BACKTRACKING, STRONG_WOLFE, got 'GOLDEN'",
        ),
        (
            ("max_linesearch_iterations = 0",),
            "parameter 'max_linesearch_iterations': expected an integer >= 1, got 0",
        ),
        (
            ("linesearch_cutback = 1",),
            "parameter 'linesearch_cutback': expected a value > 1 (the factor each rejected "
            "step is divided by), got 1",
        ),
        (
            ("linesearch_stopping_criteria = -0.1",),
            "parameter 'linesearch_stopping_criteria': expected a value >= 0, got -0.1",
        ),
        (
            ("check_negative_criterion = maybe",),
            "parameter 'check_negative_criterion': expected a boolean",
        ),
        (
            ("linesearch_cut_back = 2",),
            "unknown parameter 'linesearch_cut_back' for NewtonWithLineSearch; expected one "
            "of: abs_tol, check_negative_criterion, linear_solver, linesearch_cutback, "
            "linesearch_stopping_criteria, linesearch_type, max_its, "
            "max_linesearch_iterations, rel_tol, substep_del_tol",
        ),
    ],
)
def test_line_search_errors(lines: tuple[str, ...], message: str) -> None:
    with pytest.raises(HitError) as info:
        implicit_solver(newton("type = NewtonWithLineSearch", *lines))
    assert message in info.value.message
    assert (info.value.path, info.value.line) == ("s.i", 4)


def test_line_search_options_belong_to_newton_with_line_search() -> None:
    with pytest.raises(HitError) as info:
        implicit_solver(newton("type = Newton", "linesearch_cutback = 2"))
    assert "unknown parameter 'linesearch_cutback' for Newton" in info.value.message


def test_a_model_without_line_search_refuses_one() -> None:
    with pytest.raises(HitError) as info:
        solver(newton("type = NewtonWithLineSearch"))
    assert info.value.line == 9  # the model's solver line
    assert (
        "parameter 'solver': [Solvers/newton] is a NewtonWithLineSearch, which only "
        "ImplicitUpdate runs; J2Viscoplasticity takes type = Newton" in info.value.message
    )
