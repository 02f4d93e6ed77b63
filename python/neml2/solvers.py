"""The ``[Solvers]`` block: settings of the per-point Newton solve of implicit models.

An implicit model names its solver with ``solver = NAME``; ``[Solvers/NAME]`` then sets
the tolerances and the iteration cap, and for ``type = NewtonWithLineSearch`` the line
search (:class:`LineSearch`) that scales each Newton update. :func:`newton_loop` runs
the iterations: a Python loop when evaluated eagerly, a ``while_loop`` when traced by
``torch.export``, so the compiled graph holds the iteration once (not unrolled
``max_its`` times) and stops as soon as every point of the call has converged.
:func:`solve_per_point` is the dense linear solve of each Newton update of a system of
equations.

``abs_tol``, ``rel_tol`` and ``max_its`` are run-time settings of a compiled model: every
graph takes them as 0-dim tensor arguments, three per solver (doc/artifacts.md,
``settings``), with the block's values as defaults. A solver is known by its block name;
a model that names none uses the solver :data:`DEFAULT_SOLVER`. A model reads its values
through :func:`limits`: the solver's own numbers when evaluated eagerly, the graph's
argument tensors inside :func:`given_settings`, which ``neml2.compile.Graph`` enters
while a graph is traced.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import numbers
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from .errors import Neml2Error
from .hit import Section

#: One update ``(z, lo, hi) -> (z, lo, hi, done)`` of a bracketed per-point iteration.
Step = Callable[
    [torch.Tensor, torch.Tensor, torch.Tensor],
    tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor],
]

#: The solver types a ``[Solvers]`` block may hold; a DenseLU block only serves as a
#: Newton solver's ``linear_solver`` (every Newton step is a dense LU solve anyway).
SOLVER_TYPES = ("Newton", "NewtonWithLineSearch", "DenseLU")
#: NEML2's default iteration cap, for ``ImplicitUpdate`` (J2Viscoplasticity keeps 20).
NEML2_MAX_ITS = 25
#: The line searches of ``NewtonWithLineSearch`` (``linesearch_type``).
LINE_SEARCH_TYPES = ("BACKTRACKING", "STRONG_WOLFE")
#: The name of the solver of an implicit model whose block has no ``solver = NAME``: its
#: run-time settings are ``default.abs_tol``, ``default.rel_tol`` and ``default.max_its``.
DEFAULT_SOLVER = "default"
#: The run-time settings of one solver, in the order of a graph's ``setting`` arguments.
SETTINGS = ("abs_tol", "rel_tol", "max_its")
#: The largest ``max_its`` a setting holds (an int64 tensor).
MAX_ITS_LIMIT = 2**63 - 1


@dataclass(frozen=True)
class LineSearch:
    """NEML2's line search of ``NewtonWithLineSearch``, with its option defaults.

    Each Newton update ``du = -J^-1 r`` at ``u`` is scaled by ``alpha``, starting at 1
    and divided by ``cutback`` until the trial residual ``r_a = r(u + alpha du)``
    satisfies ``|r_a|^2 <= crit`` or ``|r_a| <= abs_tol``, with
    ``crit = |r|^2 - 2 c alpha (r . J^-1 r)`` (``BACKTRACKING``) or
    ``crit = (1 - c alpha) |r|^2`` (``STRONG_WOLFE``), ``c`` the
    ``stopping_criteria``. At most ``max_iterations - 1`` trials are made; the last one
    is taken whether or not it satisfied the test. ``max_iterations = 1`` takes every
    full Newton update, as ``Newton`` does.
    """

    kind: str = "BACKTRACKING"
    max_iterations: int = 10
    cutback: float = 2.0
    stopping_criteria: float = 1e-3

    #: The block keys of the line search, beside those of :attr:`Newton.options`.
    options = frozenset(
        {
            "linesearch_type",
            "max_linesearch_iterations",
            "linesearch_cutback",
            "linesearch_stopping_criteria",
            "check_negative_criterion",
        }
    )

    @property
    def trials(self) -> int:
        """The most trial updates of one Newton iteration."""
        return max(1, self.max_iterations - 1)


@dataclass(frozen=True)
class Newton:
    """Newton-Raphson settings: a point converged when ``|r| <= abs_tol`` or
    ``|r| <= rel_tol * |r0|`` (``r0``: the residual at the initial guess); with
    ``line_search`` (``type = NewtonWithLineSearch``) each update is scaled by it."""

    abs_tol: float = 1e-10
    rel_tol: float = 1e-8
    max_its: int = 20
    line_search: LineSearch | None = None
    #: The ``[Solvers]`` block's name (:data:`DEFAULT_SOLVER` for a model that names none),
    #: which names the solver's run-time settings; not part of the settings' comparison.
    name: str = field(default=DEFAULT_SOLVER, compare=False)

    options = frozenset(
        {"type", "abs_tol", "rel_tol", "max_its", "linear_solver", "substep_del_tol"}
    )

    @property
    def searches(self) -> bool:
        """Whether updates go through a line search (one of more than one trial)."""
        return self.line_search is not None and self.line_search.max_iterations > 1


def root_of(section: Section) -> Section:
    """The file's root section."""
    while section.parent is not None:
        section = section.parent
    return section


def solver_for(model: Section, defaults: Newton | None = None, line_search: bool = False) -> Newton:
    """The solver a model block names with ``solver = NAME``; the defaults when it names none.

    ``line_search``: whether the model can run a ``NewtonWithLineSearch`` solver; one named
    by a model that cannot is an error, not a line search silently left out.
    """
    if "solver" not in model.params:
        return replace(defaults or Newton(), name=DEFAULT_SOLVER)
    name = model.string("solver")
    solvers = root_of(model).child("Solvers")
    if solvers is None or name not in solvers.children:
        defined = ", ".join(solvers.children) if solvers is not None else ""
        where = f"solvers defined: {defined}" if defined else "the file has no [Solvers] block"
        raise model.error(
            "solver",
            f"[{model.full_name}]: unknown solver '{name}': expected [Solvers/{name}]; {where}",
        )
    section = solvers.children[name]
    if not line_search and section.string("type", "") == "NewtonWithLineSearch":
        raise model.error(
            "solver",
            f"parameter 'solver': [Solvers/{name}] is a NewtonWithLineSearch, which only "
            f"ImplicitUpdate runs; {model.string('type', 'this model')} takes type = Newton",
        )
    return parse_newton(section, defaults)


def parse_newton(section: Section, defaults: Newton | None = None) -> Newton:
    """A ``[Solvers/<name>]`` block of ``type = Newton`` or ``NewtonWithLineSearch``,
    every value checked.

    ``linear_solver`` must name a ``DenseLU`` block; ``substep_del_tol`` is accepted and
    has no effect (there is no substepping), as is ``check_negative_criterion`` (a
    diagnostic print in NEML2).
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
    known = Newton.options | (LineSearch.options if kind == "NewtonWithLineSearch" else set())
    for key in section.params:
        if key not in known:
            raise section.error(
                key,
                f"[{section.full_name}]: unknown parameter '{key}' for {kind}; "
                f"expected one of: {', '.join(sorted(known - {'type'}))}",
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
    search = parse_line_search(section) if kind == "NewtonWithLineSearch" else None
    return Newton(abs_tol, rel_tol, max_its, search, section.name)


def parse_line_search(section: Section) -> LineSearch:
    """The line-search options of a ``NewtonWithLineSearch`` block, every value checked."""
    kind = section.string("linesearch_type", LineSearch.kind)
    if kind not in LINE_SEARCH_TYPES:
        raise section.error(
            "linesearch_type",
            f"parameter 'linesearch_type': expected one of {', '.join(LINE_SEARCH_TYPES)}, "
            f"got '{kind}'",
        )
    count = section.integer("max_linesearch_iterations", LineSearch.max_iterations)
    if count < 1:
        raise section.error(
            "max_linesearch_iterations",
            f"parameter 'max_linesearch_iterations': expected an integer >= 1, got {count}",
        )
    cutback = section.number("linesearch_cutback", LineSearch.cutback)
    if not cutback > 1:
        raise section.error(
            "linesearch_cutback",
            f"parameter 'linesearch_cutback': expected a value > 1 (the factor each "
            f"rejected step is divided by), got {cutback:g}",
        )
    c = section.number("linesearch_stopping_criteria", LineSearch.stopping_criteria)
    if c < 0:
        raise section.error(
            "linesearch_stopping_criteria",
            f"parameter 'linesearch_stopping_criteria': expected a value >= 0, got {c:g}",
        )
    section.boolean("check_negative_criterion", False)  # checked; only NEML2 prints with it
    return LineSearch(kind, count, cutback, c)


# --- run-time settings ------------------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    """The values one solve uses: Python numbers when evaluated eagerly, 0-dim tensors
    (the graph's ``setting`` arguments) while a graph is traced."""

    abs_tol: float | torch.Tensor
    rel_tol: float | torch.Tensor
    max_its: int | torch.Tensor


#: Solver name -> the values a graph being traced takes as arguments (see given_settings).
_GIVEN: contextvars.ContextVar[Mapping[str, Limits] | None] = contextvars.ContextVar(
    "neml2_solver_settings", default=None
)


@contextlib.contextmanager
def given_settings(values: Mapping[str, Limits]) -> Iterator[None]:
    """Within the block, a solver named in ``values`` uses those values instead of its own
    (the tensors a compiled graph takes, so that the solve reads its arguments)."""
    token = _GIVEN.set(dict(values))
    try:
        yield
    finally:
        _GIVEN.reset(token)


def limits(solver: Newton) -> Limits:
    """The tolerances and iteration cap a solve with ``solver`` uses now."""
    given = _GIVEN.get()
    if given is not None and solver.name in given:
        return given[solver.name]
    return Limits(solver.abs_tol, solver.rel_tol, solver.max_its)


def solver_table(model: Any) -> dict[str, Newton]:
    """Each solver ``model`` uses, by name, in name order; a solver shared by several
    models appears once. Neml2Error when two models give one solver different values (a
    key the block leaves out may default differently per model type), as one solver has
    one value of each setting at run time."""
    table: dict[str, tuple[Newton, str]] = {}
    for user in model.solver_users():
        solver: Newton = user.solver
        if solver.name not in table:
            table[solver.name] = (solver, user.name)
            continue
        first, owner = table[solver.name]
        for key in SETTINGS:
            mine, theirs = getattr(solver, key), getattr(first, key)
            if mine != theirs:
                where = (
                    f"[Solvers/{solver.name}]"
                    if solver.name != DEFAULT_SOLVER
                    else f"[Solvers/{solver.name}] (or the default solver of a model without "
                    "'solver')"
                )
                raise Neml2Error(
                    f"model '{model.name}': solver '{solver.name}' has {key} = {theirs:g} in "
                    f"'{owner}' but {key} = {mine:g} in '{user.name}'; a solver has one value "
                    f"of each setting: set {key} in {where} or give the models distinct solvers"
                )
    return {name: table[name][0] for name in sorted(table)}


def setting_names(model: Any) -> list[str]:
    """``<solver>.abs_tol``, ``<solver>.rel_tol``, ``<solver>.max_its`` per solver of
    ``model``, in the order of a graph's ``setting`` arguments."""
    return [f"{name}.{key}" for name in solver_table(model) for key in SETTINGS]


def checked_setting(model: str, solver: str, key: str, value: Any) -> float | int:
    """``value`` for setting ``key`` of ``solver``, or Neml2Error naming what is allowed:
    a tolerance is a finite number >= 0, ``max_its`` an integer >= 1."""
    item = f"model '{model}': setting '{solver}.{key}' is {value!r}"
    if key == "max_its":
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise Neml2Error(f"{item}, expected an integer >= 1")
        if int(value) < 1:
            raise Neml2Error(f"{item}, expected an integer >= 1")
        if int(value) > MAX_ITS_LIMIT:
            raise Neml2Error(f"{item}, expected an integer >= 1 (at most {MAX_ITS_LIMIT})")
        return int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise Neml2Error(f"{item}, expected a finite number >= 0")
    try:
        number = float(value)
    except OverflowError:  # an integer beyond every float
        number = math.inf
    if not (math.isfinite(number) and number >= 0):
        raise Neml2Error(f"{item}, expected a finite number >= 0")
    return number


def checked_settings(
    model: str, known: list[str], solver: str, given: Mapping[str, Any]
) -> dict[str, float | int]:
    """The settings ``given`` (key -> value, None: unchanged) for ``solver``, each checked,
    or Neml2Error for a solver not in ``known`` or a value not allowed."""
    if solver not in known:
        expected = ", ".join(known) if known else "none, the model solves no equation"
        raise Neml2Error(
            f"model '{model}': unknown solver {solver!r} (expected solvers: {expected})"
        )
    return {
        key: checked_setting(model, solver, key, value)
        for key, value in given.items()
        if value is not None
    }


def run_loop(
    more: Callable[..., torch.Tensor],
    body: Callable[..., tuple[torch.Tensor, ...]],
    state: tuple[torch.Tensor, ...],
) -> tuple[torch.Tensor, ...]:
    """``while more(*state): state = body(*state)``: a ``while_loop`` when traced by
    ``torch.export`` (the body once in the graph), else a Python loop."""
    if torch.compiler.is_compiling():
        from torch._higher_order_ops.while_loop import while_loop

        return tuple(while_loop(more, body, state))  # type: ignore[no-untyped-call]
    while bool(more(*state)):
        state = body(*state)
    return state


def newton_loop(
    step: Step,
    z: torch.Tensor,
    lo: torch.Tensor,
    hi: torch.Tensor,
    done: torch.Tensor,
    max_its: int | torch.Tensor,
) -> torch.Tensor:
    """Apply ``step`` until every point is done, at most ``max_its`` times (a number, or
    the 0-dim tensor of a graph's argument).

    ``step`` must leave a done point unchanged: then a point's result does not depend
    on the other points of the call (how long the loop ran), which keeps per-point
    results bitwise equal whatever the chunk they are evaluated in.
    """
    count = torch.zeros((), dtype=torch.int64, device=z.device)

    def more(
        i: torch.Tensor, z: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, done: torch.Tensor
    ) -> torch.Tensor:
        return (i < max_its) & ~done.all()

    def body(
        i: torch.Tensor, z: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, done: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        return (i + 1, *step(z, lo, hi))

    return run_loop(more, body, (count, z, lo, hi, done))[1]


def iterate(
    step: Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]],
    u: torch.Tensor,
    done: torch.Tensor,
    max_its: int | torch.Tensor,
) -> torch.Tensor:
    """Apply ``step(u, done) -> (u, done)`` until every point is done, at most ``max_its``
    times (a number or a 0-dim tensor); a ``while_loop`` when traced (one iteration in the
    graph), else a Python loop. ``step`` must leave a done point unchanged, as in
    :func:`newton_loop`."""
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
