"""The ``[Solvers]`` block: settings of the per-point Newton solve of implicit models.

An implicit model names its solver with ``solver = NAME``; ``[Solvers/NAME]`` then sets
the tolerances and the iteration cap. :func:`newton_loop` runs the iterations: a Python
loop when evaluated eagerly, a ``while_loop`` when traced by ``torch.export``, so the
compiled graph holds the iteration once (not unrolled ``max_its`` times) and stops as
soon as every point of the call has converged. :func:`solve_per_point` is the dense
linear solve of each Newton update of a system of equations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from .hit import Section

#: One update ``(z, lo, hi) -> (z, lo, hi, done)`` of a bracketed per-point iteration.
Step = Callable[
    [torch.Tensor, torch.Tensor, torch.Tensor],
    tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor],
]

#: The solver types a ``[Solvers]`` block may hold; a DenseLU block only serves as a
#: Newton solver's ``linear_solver`` (every Newton step is a dense LU solve anyway).
SOLVER_TYPES = ("Newton", "DenseLU")
#: NEML2's default iteration cap, for ``ImplicitUpdate`` (J2Viscoplasticity keeps 20).
NEML2_MAX_ITS = 25


@dataclass(frozen=True)
class Newton:
    """Newton-Raphson settings: a point converged when ``|r| <= abs_tol`` or
    ``|r| <= rel_tol * |r0|`` (``r0``: the residual at the initial guess)."""

    abs_tol: float = 1e-10
    rel_tol: float = 1e-8
    max_its: int = 20

    options = frozenset(
        {"type", "abs_tol", "rel_tol", "max_its", "linear_solver", "substep_del_tol"}
    )


def root_of(section: Section) -> Section:
    """The file's root section."""
    while section.parent is not None:
        section = section.parent
    return section


def solver_for(model: Section, defaults: Newton | None = None) -> Newton:
    """The solver a model block names with ``solver = NAME``; the defaults when it names none."""
    if "solver" not in model.params:
        return defaults or Newton()
    name = model.string("solver")
    solvers = root_of(model).child("Solvers")
    if solvers is None or name not in solvers.children:
        defined = ", ".join(solvers.children) if solvers is not None else ""
        where = f"solvers defined: {defined}" if defined else "the file has no [Solvers] block"
        raise model.error(
            "solver",
            f"[{model.full_name}]: unknown solver '{name}': expected [Solvers/{name}]; {where}",
        )
    return parse_newton(solvers.children[name], defaults)


def parse_newton(section: Section, defaults: Newton | None = None) -> Newton:
    """A ``[Solvers/<name>]`` block of ``type = Newton``, every value checked.

    ``linear_solver`` must name a ``DenseLU`` block; ``substep_del_tol`` is accepted and
    has no effect (there is no substepping).
    """
    kind = section.string("type")
    if kind == "DenseLU":
        raise section.error(
            "type",
            f"[{section.full_name}]: a DenseLU block is a linear solver; name it in a "
            "Newton block's linear_solver and name the Newton block here",
        )
    if kind not in SOLVER_TYPES:
        raise section.error(
            "type",
            f"[{section.full_name}]: unknown solver type '{kind}'; "
            f"known types: {', '.join(SOLVER_TYPES)}",
        )
    for key in section.params:
        if key not in Newton.options:
            raise section.error(
                key,
                f"[{section.full_name}]: unknown parameter '{key}' for {kind}; "
                f"expected one of: {', '.join(sorted(Newton.options - {'type'}))}",
            )
    if "linear_solver" in section.params:
        name = section.string("linear_solver")
        solvers = section.parent
        lu = solvers.child(name) if solvers is not None else None
        if lu is None or lu.string("type", "") != "DenseLU":
            raise section.error(
                "linear_solver",
                f"parameter 'linear_solver': expected a [Solvers/{name}] block of "
                "type = DenseLU (the only linear solver)",
            )
    defaults = defaults or Newton()
    abs_tol = section.number("abs_tol", defaults.abs_tol)
    rel_tol = section.number("rel_tol", defaults.rel_tol)
    max_its = section.integer("max_its", defaults.max_its)
    for key, value in (("abs_tol", abs_tol), ("rel_tol", rel_tol)):
        if value < 0:
            raise section.error(key, f"parameter '{key}': expected a value >= 0, got {value:g}")
    if abs_tol == 0 and rel_tol == 0:
        raise section.error(
            "abs_tol", "parameters 'abs_tol' and 'rel_tol' are both 0: no point could converge"
        )
    if max_its < 1:
        raise section.error(
            "max_its", f"parameter 'max_its': expected an integer >= 1, got {max_its}"
        )
    return Newton(abs_tol, rel_tol, max_its)


def newton_loop(
    step: Step,
    z: torch.Tensor,
    lo: torch.Tensor,
    hi: torch.Tensor,
    done: torch.Tensor,
    solver: Newton,
) -> torch.Tensor:
    """Apply ``step`` until every point is done, at most ``solver.max_its`` times.

    ``step`` must leave a done point unchanged: then a point's result does not depend
    on the other points of the call (how long the loop ran), which keeps per-point
    results bitwise equal whatever the chunk they are evaluated in.
    """
    count = torch.zeros((), dtype=torch.int64, device=z.device)

    def more(
        i: torch.Tensor, z: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, done: torch.Tensor
    ) -> torch.Tensor:
        return (i < solver.max_its) & ~done.all()

    def body(
        i: torch.Tensor, z: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, done: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        return (i + 1, *step(z, lo, hi))

    state: tuple[torch.Tensor, ...] = (count, z, lo, hi, done)
    if torch.compiler.is_compiling():
        try:
            from torch._higher_order_ops.while_loop import while_loop
        except ImportError:  # a torch without it: the same updates, unrolled
            for _ in range(solver.max_its):
                state = body(*state)
            return state[1]
        state = tuple(while_loop(more, body, state))  # type: ignore[no-untyped-call]
    else:
        while bool(more(*state)):
            state = body(*state)
    return state[1]


def iterate(
    step: Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]],
    u: torch.Tensor,
    done: torch.Tensor,
    max_its: int,
) -> torch.Tensor:
    """Apply ``step(u, done) -> (u, done)`` until every point is done, at most ``max_its``
    times; a ``while_loop`` when traced (one iteration in the graph), else a Python loop.
    ``step`` must leave a done point unchanged, as in :func:`newton_loop`."""
    count = torch.zeros((), dtype=torch.int64, device=u.device)

    def more(i: torch.Tensor, u: torch.Tensor, done: torch.Tensor) -> torch.Tensor:
        return (i < max_its) & ~done.all()

    def body(
        i: torch.Tensor, u: torch.Tensor, done: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        u, done = step(u, done)
        return i + 1, u, done

    state: tuple[torch.Tensor, ...] = (count, u, done)
    if torch.compiler.is_compiling():
        from torch._higher_order_ops.while_loop import while_loop

        state = tuple(while_loop(more, body, state))  # type: ignore[no-untyped-call]
    else:
        while bool(more(*state)):
            state = body(*state)
    return state[1]


def solve_per_point(A: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``A^-1 b`` per point: ``A`` ``(B, n, n)``, ``b`` ``(B, n, m)``.

    Gaussian elimination with partial pivoting, written with elementwise ops over the
    static size ``n``, instead of ``torch.linalg.solve``: AOTInductor has no C shim for
    the LAPACK solve (it would run through a proxy executor), and elementwise arithmetic
    makes a point's result independent of the batch it is solved in. A singular ``A``
    gives inf or nan, which fails the caller's convergence test rather than raising.
    """
    n = A.shape[-1]
    if n == 1:
        return b / A
    m = b.shape[-1]
    M = torch.cat([A, b], -1)
    rows = torch.arange(n, device=A.device).expand(M.shape[0], n)
    for k in range(n - 1):
        pivot = M[:, k:, k].abs().argmax(-1, keepdim=True) + k
        order = torch.where(rows == k, pivot, torch.where(rows == pivot, k, rows))
        M = M.gather(1, order.unsqueeze(-1).expand(M.shape))
        factors = M[:, k + 1 :, k : k + 1] / M[:, k : k + 1, k : k + 1]
        M = torch.cat([M[:, : k + 1], M[:, k + 1 :] - factors * M[:, k : k + 1]], 1)
    x: list[torch.Tensor] = [b.new_zeros(())] * n
    for k in reversed(range(n)):
        rhs = M[:, k, n:]
        for j in range(k + 1, n):
            rhs = rhs - M[:, k, j : j + 1] * x[j]
        x[k] = rhs / M[:, k, k : k + 1]
    return torch.stack(x, 1).reshape(M.shape[0], n, m)
