"""ImplicitUpdate: NEML2's per-point Newton solve of a residual model for its unknowns.

``equation_system`` names an ``[EquationSystems]`` block of ``type = NonlinearSystem``:
its ``model`` (a block of ``[Models]``, usually a ``ComposedModel`` of the blocks that
make up the residuals), its ``unknowns`` (inputs of that model) and its ``residuals``
(outputs, by default ``<unknown>_residual`` each). ``solver`` names a ``[Solvers]``
block of ``type = Newton`` or ``NewtonWithLineSearch``. The unknowns start from the
``predictor``, a model whose outputs are unknowns (``ConstantExtrapolationPredictor``:
``u~1``; ``CrystalPlasticityStrainPredictor``; a ``ComposedModel`` of such), or, where
it predicts none, from inputs of the same names. The predictor's inputs are inputs of
the update; the solution does not depend on them through the guess, and its parameters
are constants of the update.

Unknowns may carry sub-batch axes (one dislocation density per slip system, declared
in ``[Settings]/[example_batch_shape]``): :meth:`ImplicitUpdate.with_sub_batch` gives
the residual model and the predictor the axes of each lag family ``u``/``u~1``, and
every sub-batch entry is one more component of the point's system.

Newton per point: ``u <- u - J^-1 r`` with ``J = dr/du`` from the residual model's
analytic Jacobian, until ``|r| <= abs_tol`` or ``|r| <= rel_tol |r0|`` (``|.|`` the
2-norm over every residual of the point), at most ``max_its`` updates; with a line
search (:class:`~neml2.solvers.LineSearch`) each update is scaled first. A converged
point keeps its value while the others iterate. The derivatives are those of the
converged solution (implicit function theorem): ``du/dg = -J^-1 dr/dg`` for the other
inputs ``g`` and ``du/dp = -J^-1 dr/dp`` for the parameters.

Under ``torch.export`` the iteration is one ``while_loop`` (:func:`neml2.solvers.iterate`;
with a line search every trial is one pass of the loop, :func:`neml2.solvers.run_loop`)
and ``J^-1`` a per-point elimination (:func:`neml2.solvers.solve_per_point`), so the
graphs compile with AOTInductor; the residual model's blocks must then build their
constants with factory ops, as a tensor constant inside the loop body does not lower.
``abs_tol``, ``rel_tol`` and ``max_its`` are then the graph's ``setting`` arguments
(:func:`neml2.solvers.limits`), so a compiled model's caller may change them.

The predictors and their check are in :mod:`.predictors`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch

from ..hit import Section
from ..solvers import (
    NEML2_MAX_ITS,
    Limits,
    LineSearch,
    Newton,
    iterate,
    limits,
    run_loop,
    solve_per_point,
    solver_for,
)
from .base import Evaluation, Model, Status, Tensors, Variable, root_of
from .predictors import _with_axes, check_predictor
from .registry import build_model, register

Shape = tuple[int, ...]


def _parent_block(section: Section, block: str) -> Section:
    root = section
    while root.parent is not None:
        root = root.parent
    found = root.child(block)
    if found is None:
        raise section.error(None, f"[{section.full_name}]: the file has no [{block}] block")
    return found


def _named(section: Section, key: str, block: str) -> Section:
    """The ``[block/<name>]`` that ``key`` names."""
    name = section.string(key)
    parent = _parent_block(section, block)
    found = parent.child(name)
    if found is None:
        defined = ", ".join(parent.children) or "none"
        raise section.error(
            key, f"parameter '{key}': no [{block}/{name}]; blocks defined there: {defined}"
        )
    return found


@register
class ImplicitUpdate(Model):
    """Keys: ``equation_system``, ``solver``, ``predictor``; see the module docstring."""

    type_name = "ImplicitUpdate"
    options = frozenset(
        {
            "equation_system",
            "solver",
            "predictor",
            "input_sensitivity_solver",
            "param_sensitivity_solver",
            "max_substepping_level",
            "incremental_variables",
        }
    )

    def __init__(
        self,
        name: str,
        system: Model,
        unknowns: list[str],
        residuals: list[str],
        solver: Newton,
        predictor: Model | None = None,
    ) -> None:
        self.system = system
        self.unknowns = [system.variable(u) for u in unknowns]
        self.residuals = [system.variable(r) for r in residuals]
        self.solver = solver
        self.predictor = predictor
        sizes = (sum(v.size for v in self.unknowns), sum(v.size for v in self.residuals))
        if sizes[0] != sizes[1]:
            raise ValueError(
                f"ImplicitUpdate '{name}': {sizes[0]} unknown components but {sizes[1]} "
                "residual components"
            )
        self.predicted: list[str] = []
        if predictor is not None:
            self.predicted = check_predictor(predictor, self.unknowns)
        inputs = [v for v in system.inputs if v.name not in self.predicted]
        for v in predictor.inputs if predictor is not None else ():
            if v.name not in {w.name for w in inputs}:
                inputs.append(v)
        self.givens = [v for v in system.inputs if v.name not in unknowns]
        super().__init__(name, inputs, self.unknowns, system.parameters)
        self._parameter_shapes = system.parameter_shapes

    @property
    def implicit(self) -> bool:
        return True

    def solver_users(self) -> list[Model]:
        return [self]

    def with_sub_batch(self, subs: Mapping[str, Shape]) -> Model:
        """The update with sub-batch axes on the variables of the lag families in ``subs``
        (``u`` and ``u~1`` share theirs): the residual model and the predictor get them,
        an unknown the axes its residual model gives it."""
        if not any(subs.values()):
            return self
        system, predictor = _with_axes(self.system, self.predictor, subs)
        return ImplicitUpdate(
            self.name,
            system,
            [v.name for v in self.unknowns],
            [v.name for v in self.residuals],
            self.solver,
            predictor,
        )

    def to(self, device: torch.device | str) -> Model:
        if self.predictor is not None:
            self.predictor.to(device)
        return super().to(device)

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        # the update joins the blocks being built (ComposedModel's stack), so a residual
        # model or a predictor that includes it is reported, not recursed into
        from .composed import ComposedModel  # builds on this module's base

        building = ComposedModel._building
        if section.full_name in building:
            chain = " -> ".join([*building[building.index(section.full_name) :], section.full_name])
            raise section.error(None, f"[{section.full_name}]: models include each other: {chain}")
        building.append(section.full_name)
        try:
            return cls._build(section, building)
        finally:
            building.pop()

    @classmethod
    def _build(cls, section: Section, building: list[str]) -> Model:
        system_block = _named(section, "equation_system", "EquationSystems")
        kind = system_block.string("type")
        if kind != "NonlinearSystem":
            raise system_block.error(
                "type", f"[{system_block.full_name}]: expected type = NonlinearSystem, got '{kind}'"
            )
        for key in system_block.params:
            if key not in ("type", "model", "unknowns", "residuals"):
                raise system_block.error(
                    key,
                    f"[{system_block.full_name}]: unknown parameter '{key}' for NonlinearSystem; "
                    "expected one of: model, residuals, unknowns",
                )
        if section.integer("max_substepping_level", 0) != 0:
            raise section.error(
                "max_substepping_level",
                "parameter 'max_substepping_level': substepping is not supported yet; set 0",
            )
        if section.strings("incremental_variables", []):
            raise section.error(
                "incremental_variables",
                "parameter 'incremental_variables': substepping is not supported yet",
            )
        model_block = _named(system_block, "model", "Models")
        system = build_model(model_block)
        if system.implicit:
            raise system_block.error(
                "model", "parameter 'model': the residual model is itself implicit; not supported"
            )
        unknowns = system_block.strings("unknowns")
        inputs = {v.name for v in system.inputs}
        outputs = {v.name for v in system.outputs}
        for u in unknowns:
            if u not in inputs:
                raise system_block.error(
                    "unknowns",
                    f"parameter 'unknowns': '{u}' is not an input of model '{system.name}'; "
                    f"inputs: {', '.join(v.name for v in system.inputs)}",
                )
        residuals = system_block.strings("residuals", [f"{u}_residual" for u in unknowns])
        for r in residuals:
            if r not in outputs:
                raise system_block.error(
                    "residuals" if "residuals" in system_block.params else "unknowns",
                    f"residual '{r}' is not an output of model '{system.name}'; "
                    f"outputs: {', '.join(v.name for v in system.outputs)}",
                )
        predictor: Model | None = None
        if "predictor" in section.params:
            predictor_block = _named(section, "predictor", "Models")
            if predictor_block.full_name == section.full_name:
                raise section.error(
                    "predictor",
                    f"parameter 'predictor': '{section.name}' is this ImplicitUpdate itself; "
                    "a predictor is an explicit model whose outputs are unknowns",
                )
            if predictor_block.full_name in building:
                chain = " -> ".join(
                    [
                        *building[building.index(predictor_block.full_name) :],
                        predictor_block.full_name,
                    ]
                )
                raise section.error(
                    "predictor",
                    f"parameter 'predictor': '{predictor_block.name}' includes this "
                    f"ImplicitUpdate: {chain}",
                )
            predictor = build_model(predictor_block)
            try:
                check_predictor(predictor, [system.variable(u) for u in unknowns], base=True)
            except ValueError as err:
                raise section.error("predictor", f"parameter 'predictor': {err}") from None
        solver = solver_for(section, Newton(max_its=NEML2_MAX_ITS), line_search=True)
        # the sub-batch axes the file declares: an unknown's may change the system's size
        from .sub_batch import declared_sub_batch, lookup  # builds on this module's base

        declared = declared_sub_batch(root_of(section))
        named = [*system.inputs, *(predictor.inputs if predictor is not None else ())]
        subs = {v.name: shape for v in named if (shape := lookup(declared, v.name))}
        try:
            system, predictor = _with_axes(system, predictor, subs)
        except ValueError as err:
            raise section.error(None, f"[{section.full_name}]: {err}") from None
        try:
            return cls(section.name, system, unknowns, residuals, solver, predictor)
        except ValueError as err:
            raise system_block.error("unknowns", f"[{system_block.full_name}]: {err}") from None

    # --- assembly of the per-point system ----------------------------------------------

    def _flat(self, of: Variable, wrt: str, size: int, block: torch.Tensor, n: int) -> torch.Tensor:
        if not self.system.jacobian_batched(of.name, wrt):
            return block.reshape(1, of.size, size).expand(n, of.size, size)
        return block.reshape(n, of.size, size)

    def _pflat(self, of: Variable, q: str, size: int, block: torch.Tensor, n: int) -> torch.Tensor:
        if not self.system.param_jacobian_batched(of.name, q):
            return block.reshape(1, of.size, size).expand(n, of.size, size)
        return block.reshape(n, of.size, size)

    def _split(self, u: torch.Tensor) -> Tensors:
        out: Tensors = {}
        start = 0
        for v in self.unknowns:
            out[v.name] = u[:, start : start + v.size].reshape((u.shape[0], *v.shape))
            start += v.size
        return out

    def _system(
        self,
        given: Mapping[str, torch.Tensor],
        u: torch.Tensor,
        p: Mapping[str, torch.Tensor],
        param_jacobian: bool = False,
    ) -> tuple[Evaluation, torch.Tensor, torch.Tensor]:
        """The residual model at ``u``: its evaluation, ``r`` ``(B, n)`` and ``dr/du``."""
        n = u.shape[0]
        ev = self.system.evaluate(
            {**given, **self._split(u)}, p, jacobian=True, param_jacobian=param_jacobian
        )
        r = torch.cat([ev.outputs[v.name].reshape(n, v.size) for v in self.residuals], -1)
        J = torch.cat(
            [
                torch.cat(
                    [
                        self._flat(rv, uv.name, uv.size, ev.jacobian[rv.name][uv.name], n)
                        for uv in self.unknowns
                    ],
                    -1,
                )
                for rv in self.residuals
            ],
            -2,
        )
        return ev, r, J

    def _search(
        self,
        given: Mapping[str, torch.Tensor],
        p: Mapping[str, torch.Tensor],
        u0: torch.Tensor,
        r0: torch.Tensor,
        J0: torch.Tensor,
        scale: torch.Tensor,
        search: LineSearch,
        settings: Limits,
    ) -> torch.Tensor:
        """Newton with a line search, per point: every pass of the loop evaluates one trial
        ``u + alpha du`` and either takes it (the next iterate, whose update it then
        computes from the same evaluation) or divides ``alpha`` by the cutback.

        The state per point: the iterate ``u``, its update ``du``, ``alpha``, the trial
        count ``k``, ``|r|^2`` and ``r . J^-1 r`` at ``u``, the updates taken, and
        whether it converged. A point stops once converged or after ``max_its`` updates;
        a stopped point is left unchanged, so its result does not depend on the others.
        ``settings``: the tolerances and the cap on updates (see :func:`neml2.solvers.limits`).
        """
        n, size = u0.shape
        atol, rtol, cap = settings.abs_tol, settings.rel_tol, settings.max_its
        eye = torch.eye(size, dtype=u0.dtype).to(u0.device).expand(n, size, size)

        def converged(r: torch.Tensor) -> torch.Tensor:
            norm = r.square().sum(-1).sqrt()
            return (norm <= atol) | (norm <= rtol * scale)

        def update(r: torch.Tensor, J: torch.Tensor, skip: torch.Tensor) -> torch.Tensor:
            J = torch.where(skip.reshape(-1, 1, 1), eye, J)
            return -solve_per_point(J, r.unsqueeze(-1)).squeeze(-1)

        done0 = converged(r0)
        du0 = update(r0, J0, done0)
        ones = torch.ones(n, dtype=u0.dtype, device=u0.device)
        state = (
            u0.clone(),
            du0,
            ones,  # alpha
            ones.clone(),  # k, the trial of this update
            r0.square().sum(-1),
            -(r0 * du0).sum(-1),  # r . J^-1 r
            torch.zeros(n, dtype=torch.int64, device=u0.device),  # updates taken
            done0,
        )
        limit = torch.zeros((), dtype=torch.int64, device=u0.device)

        def stopped(its: torch.Tensor, done: torch.Tensor) -> torch.Tensor:
            return done | (its >= cap)

        def more(i: torch.Tensor, *s: torch.Tensor) -> torch.Tensor:
            return (i < cap * search.trials) & ~stopped(s[6], s[7]).all()

        def body(i: torch.Tensor, *s: torch.Tensor) -> tuple[torch.Tensor, ...]:
            u, du, alpha, k, nr2, rdu, its, done = s
            still = ~stopped(its, done)
            trial = u + alpha.unsqueeze(-1) * du
            _, r, J = self._system(given, trial, p)
            tr2 = r.square().sum(-1)
            if search.kind == "STRONG_WOLFE":
                crit = (1 - search.stopping_criteria * alpha) * nr2
            else:
                crit = nr2 - 2 * search.stopping_criteria * alpha * rdu
            take = still & ((tr2 <= crit) | (tr2 <= atol * atol) | (k >= search.trials))
            now = converged(r)
            step = update(r, J, ~take | now)
            keep = ~take
            return (
                i + 1,
                torch.where(take.unsqueeze(-1), trial, u),
                torch.where(take.unsqueeze(-1), step, du),
                torch.where(
                    take, torch.ones_like(alpha), torch.where(still, alpha / search.cutback, alpha)
                ),
                torch.where(take, torch.ones_like(k), torch.where(still, k + 1, k)),
                torch.where(take, tr2, nr2),
                torch.where(take, -(r * step).sum(-1), rdu),
                torch.where(take, its + 1, its),
                torch.where(keep, done, now),
            )

        return run_loop(more, body, (limit, *state))[1]

    def evaluate(
        self,
        x: Mapping[str, torch.Tensor],
        p: Mapping[str, torch.Tensor],
        jacobian: bool = False,
        param_jacobian: bool = False,
    ) -> Evaluation:
        given = {v.name: x[v.name] for v in self.givens}
        guess: Mapping[str, torch.Tensor] = x
        if self.predictor is not None:
            wanted = {v.name: x[v.name] for v in self.predictor.inputs}
            guess = {**x, **self.predictor.evaluate(wanted, self.predictor.parameters).outputs}
        u0 = torch.cat([guess[v.name].reshape(-1, v.size) for v in self.unknowns], -1)
        n, size = u0.shape
        settings = limits(self.solver)  # numbers, or a traced graph's setting arguments
        atol, rtol = settings.abs_tol, settings.rel_tol
        _, r0, J0 = self._system(given, u0, p)
        scale = r0.square().sum(-1).sqrt()
        eye = torch.eye(size, dtype=u0.dtype).to(u0.device).expand(n, size, size)

        def step(u: torch.Tensor, done: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            _, r, J = self._system(given, u, p)
            norm = r.square().sum(-1).sqrt()
            done = done | (norm <= atol) | (norm <= rtol * scale)
            J = torch.where(done.reshape(-1, 1, 1), eye, J)
            du = solve_per_point(J, r.unsqueeze(-1)).squeeze(-1)
            return torch.where(done.unsqueeze(-1), u, u - du), done

        start = torch.zeros(n, dtype=torch.bool, device=u0.device)
        if self.solver.searches:
            assert self.solver.line_search is not None
            u = self._search(given, p, u0, r0, J0, scale, self.solver.line_search, settings)
        else:
            u = iterate(step, u0.clone(), start, settings.max_its)
        ev, r, J = self._system(given, u, p, param_jacobian)
        norm = r.square().sum(-1).sqrt()
        status = Status((norm <= atol) | (norm <= rtol * scale), norm)
        result = Evaluation(self._split(u), status=status)
        if not (jacobian or param_jacobian):
            return result

        def sensitivity(rhs: torch.Tensor) -> torch.Tensor:
            """-J^-1 rhs, rhs ``(B, n, m)``."""
            return -solve_per_point(J, rhs)

        def rows(d: torch.Tensor, shape: tuple[int, ...]) -> dict[str, torch.Tensor]:
            out: dict[str, torch.Tensor] = {}
            start = 0
            for v in self.unknowns:
                out[v.name] = d[:, start : start + v.size].reshape((n, *v.shape, *shape))
                start += v.size
            return out

        if jacobian:
            result.jacobian = {v.name: {} for v in self.unknowns}
            given_names = {g.name for g in self.givens}
            for w in self.inputs:
                if w.name in given_names:
                    dr = torch.cat(
                        [
                            self._flat(rv, w.name, w.size, ev.jacobian[rv.name][w.name], n)
                            for rv in self.residuals
                        ],
                        -2,
                    )
                    block = rows(sensitivity(dr), w.shape)
                else:  # an initial guess: the solution does not depend on it
                    block = {v.name: u0.new_zeros((n, *v.shape, *w.shape)) for v in self.unknowns}
                for name, b in block.items():
                    result.jacobian[name][w.name] = b
        if param_jacobian:
            result.param_jacobian = {v.name: {} for v in self.unknowns}
            for q in self.parameters:
                shape = self.parameter_shapes[q]  # a parameter given per point has one more axis
                qsize = max(1, math.prod(shape))
                dr = torch.cat(
                    [
                        self._pflat(rv, q, qsize, ev.param_jacobian[rv.name][q], n)
                        for rv in self.residuals
                    ],
                    -2,
                )
                for name, b in rows(sensitivity(dr), shape).items():
                    result.param_jacobian[name][q] = b
        return result
