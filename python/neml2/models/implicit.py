"""ImplicitUpdate: NEML2's per-point Newton solve of a residual model for its unknowns.

``equation_system`` names an ``[EquationSystems]`` block of ``type = NonlinearSystem``:
its ``model`` (a block of ``[Models]``, usually a ``ComposedModel`` of the blocks that
make up the residuals), its ``unknowns`` (inputs of that model) and its ``residuals``
(outputs, by default ``<unknown>_residual`` each). ``solver`` names a ``[Solvers]``
block of ``type = Newton``. The unknowns start from the ``predictor``
(``ConstantExtrapolationPredictor``: ``u~1``), or, without one, from inputs of the
same names.

Newton per point: ``u <- u - J^-1 r`` with ``J = dr/du`` from the residual model's
analytic Jacobian, until ``|r| <= abs_tol`` or ``|r| <= rel_tol |r0|`` (``|.|`` the
2-norm over every residual of the point), at most ``max_its`` updates. A converged
point keeps its value while the others iterate. The derivatives are those of the
converged solution (implicit function theorem): ``du/dg = -J^-1 dr/dg`` for the other
inputs ``g`` and ``du/dp = -J^-1 dr/dp`` for the parameters.

Under ``torch.export`` the iteration is one ``while_loop`` (:func:`neml2.solvers.iterate`)
and ``J^-1`` a per-point elimination (:func:`neml2.solvers.solve_per_point`), so the
graphs compile with AOTInductor; the residual model's blocks must then build their
constants with factory ops, as a tensor constant inside the loop body does not lower.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch

from ..hit import Section
from ..solvers import NEML2_MAX_ITS, Newton, iterate, solve_per_point, solver_for
from .base import Blocks, Evaluation, Leaf, Model, Status, Tensors, Variable, build_model, register


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
class ConstantExtrapolationPredictor(Leaf):
    """The initial guess of each unknown listed: its value at the start of the step, ``u~1``."""

    type_name = "ConstantExtrapolationPredictor"
    options = frozenset({"unknowns_SR2", "unknowns_Scalar", "unknowns_MRP", "unknowns_R2"})

    def __init__(self, name: str, unknowns: Mapping[str, tuple[int, ...]]) -> None:
        self.unknowns = dict(unknowns)
        super().__init__(
            name,
            [Variable(f"{u}~1", s) for u, s in unknowns.items()],
            [Variable(u, s) for u, s in unknowns.items()],
            {},
        )

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        unknowns: dict[str, tuple[int, ...]] = {}
        kinds = (
            ("unknowns_SR2", (6,)),
            ("unknowns_Scalar", ()),
            ("unknowns_MRP", (3,)),
            ("unknowns_R2", (3, 3)),
        )
        for key, shape in kinds:
            for u in section.strings(key, []):
                unknowns[u] = shape
        if not unknowns:
            raise section.error(
                None,
                f"[{section.full_name}]: expected unknowns_SR2, unknowns_Scalar, unknowns_MRP "
                "or unknowns_R2",
            )
        return cls(section.name, unknowns)

    def kernel(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        out = {u: x[f"{u}~1"] for u in self.unknowns}
        jac: Blocks = {}
        for u, shape in self.unknowns.items():
            like = x[f"{u}~1"]
            size = math.prod(shape)
            eye = torch.eye(size, dtype=like.dtype).to(like.device).reshape((*shape, *shape))
            jac[u] = {f"{u}~1": eye.unsqueeze(0).expand((like.shape[0], *eye.shape)).clone()}
        return out, jac, {}


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
        predicted: list[str],
    ) -> None:
        self.system = system
        self.unknowns = [system.variable(u) for u in unknowns]
        self.residuals = [system.variable(r) for r in residuals]
        self.solver = solver
        self.predicted = predicted
        inputs = [v for v in system.inputs if v.name not in predicted]
        for u in self.unknowns:
            if u.name in predicted and f"{u.name}~1" not in {v.name for v in inputs}:
                inputs.append(Variable(f"{u.name}~1", u.shape))
        self.givens = [v for v in system.inputs if v.name not in unknowns]
        super().__init__(name, inputs, self.unknowns, system.parameters)

    @property
    def implicit(self) -> bool:
        return True

    @classmethod
    def from_hit(cls, section: Section) -> Model:
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
        sizes = (
            sum(system.variable(u).size for u in unknowns),
            sum(system.variable(r).size for r in residuals),
        )
        if sizes[0] != sizes[1]:
            raise system_block.error(
                "unknowns",
                f"[{system_block.full_name}]: {sizes[0]} unknown components but "
                f"{sizes[1]} residual components",
            )
        predicted: list[str] = []
        if "predictor" in section.params:
            pred = _named(section, "predictor", "Models")
            if pred.string("type", "") != ConstantExtrapolationPredictor.type_name:
                raise section.error(
                    "predictor",
                    "parameter 'predictor': only a ConstantExtrapolationPredictor is supported",
                )
            predictor = build_model(pred)
            predicted = [u for u in unknowns if u in {v.name for v in predictor.outputs}]
        solver = solver_for(section, Newton(max_its=NEML2_MAX_ITS))
        return cls(section.name, system, unknowns, residuals, solver, predicted)

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

    def evaluate(
        self,
        x: Mapping[str, torch.Tensor],
        p: Mapping[str, torch.Tensor],
        jacobian: bool = False,
        param_jacobian: bool = False,
    ) -> Evaluation:
        given = {v.name: x[v.name] for v in self.givens}
        u0 = torch.cat(
            [
                (x[f"{v.name}~1"] if v.name in self.predicted else x[v.name]).reshape(-1, v.size)
                for v in self.unknowns
            ],
            -1,
        )
        n, size = u0.shape
        atol, rtol = self.solver.abs_tol, self.solver.rel_tol
        _, r0, _ = self._system(given, u0, p)
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
        u = iterate(step, u0.clone(), start, self.solver.max_its)
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
                qsize = max(1, math.prod(p[q].shape))
                dr = torch.cat(
                    [
                        self._pflat(rv, q, qsize, ev.param_jacobian[rv.name][q], n)
                        for rv in self.residuals
                    ],
                    -2,
                )
                for name, b in rows(sensitivity(dr), tuple(p[q].shape)).items():
                    result.param_jacobian[name][q] = b
        return result
