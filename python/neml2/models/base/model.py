"""The :class:`Model` base class (see :mod:`neml2.models.base` for its kernels, shapes and
checks) and :class:`Leaf`, an explicit model written as one kernel."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import torch

from ...errors import Neml2Error
from ...hit import Section
from ...solvers import checked_settings, solver_table
from ..batch import Batch
from .calls import _apply, _pull_back, check_parameter, raise_if_failed, refuse_unknown
from .values import Blocks, Evaluation, Pair, SecondOrder, Tensors, Variable


class Model:
    """A material model with analytic derivatives; see :mod:`neml2.models.base`."""

    type_name: ClassVar[str]
    #: The dtype of every parameter and variable.
    dtype: ClassVar[torch.dtype] = torch.float64
    #: The keys its input-file block accepts besides ``type``.
    options: ClassVar[frozenset[str]] = frozenset()
    #: Whether :meth:`evaluate` takes any parameter per point, ``(B, *shape)``, in place of
    #: a shared one; other models are evaluated point by point for that (:mod:`..points`).
    takes_per_point: ClassVar[bool] = False

    def __init__(
        self,
        name: str,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        parameters: Mapping[str, torch.Tensor],
    ) -> None:
        self.name = name
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.parameters: Tensors = dict(parameters)
        self._parameter_shapes = {k: tuple(v.shape) for k, v in self.parameters.items()}

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        """Build the model from its ``[Models/<name>]`` block."""
        raise NotImplementedError

    @property
    def parameter_shapes(self) -> dict[str, tuple[int, ...]]:
        """The declared shape of each parameter: one value's, as the model was built (a
        parameter given per point, ``(B, *shape)``, has one more leading axis). A model
        that sets its parameters after :meth:`__init__` has them recorded at first use."""
        # Plain attribute reads once recorded: the solves trace their loop bodies with Dynamo,
        # which (torch 2.11) cannot trace a call on an object's __dict__.
        shapes: dict[str, tuple[int, ...]] | None = getattr(self, "_parameter_shapes", None)
        if shapes is None:
            shapes = {}
            self._parameter_shapes = shapes
        for name, value in self.parameters.items():
            if name not in shapes:
                shapes[name] = tuple(value.shape)
        return shapes

    def per_point_parameters(self, p: Mapping[str, torch.Tensor]) -> list[str]:
        """The parameters of ``p`` given per point, ``(B, *shape)``, rather than shared."""
        shapes = self.parameter_shapes
        return [q for q, t in p.items() if q in shapes and t.dim() == len(shapes[q]) + 1]

    @property
    def implicit(self) -> bool:
        """Whether evaluations report a convergence :class:`Status` (a solve per point)."""
        return False

    def solver_users(self) -> list[Model]:
        """The models inside this one (itself included) that run a Newton solve, each with
        its :class:`~neml2.solvers.Newton` as ``solver``; none for an explicit model."""
        return []

    @property
    def solver_settings(self) -> dict[str, dict[str, Any]]:
        """``{solver: {"abs_tol": float, "rel_tol": float, "max_its": int}}`` for each solver
        the model uses, by ``[Solvers]`` block name (``default`` for a model that names
        none), in name order; empty for an explicit model. A copy: change the values with
        :meth:`set_solver_settings`."""
        return {
            name: {
                "abs_tol": float(solver.abs_tol),
                "rel_tol": float(solver.rel_tol),
                "max_its": int(solver.max_its),
            }
            for name, solver in solver_table(self).items()
        }

    def set_solver_settings(
        self,
        solver: str,
        *,
        abs_tol: float | None = None,
        rel_tol: float | None = None,
        max_its: int | None = None,
    ) -> None:
        """Change the tolerances or the iteration cap of ``solver`` (None: unchanged) for
        the next evaluations, in every model that uses it, as the compiled model's
        ``set_solver_settings`` does. Neml2Error for an unknown solver or a value not
        allowed (a tolerance is a finite number >= 0, ``max_its`` an integer >= 1); then
        nothing is changed."""
        given = {"abs_tol": abs_tol, "rel_tol": rel_tol, "max_its": max_its}
        values = checked_settings(self.name, list(solver_table(self)), solver, given)
        for user in self.solver_users():
            if user.solver.name == solver:  # type: ignore[attr-defined]
                user.solver = dataclasses.replace(user.solver, **values)  # type: ignore[attr-defined]

    def with_sub_batch(self, subs: Mapping[str, tuple[int, ...]]) -> Model:
        """This model with sub-batch axes on the inputs named in ``subs`` (name -> axes).

        A model that works point by point, as most do, treats each sub-batch entry as one
        more point (:class:`~neml2.models.sub_batch.SubBatched`); models that reduce over
        a sub-batch axis, or combine several models, override this. Raises ValueError when
        the axes do not fit the model.
        """
        from ..sub_batch import point_by_point  # builds on this module

        return point_by_point(self, subs)

    # --- analytic kernels (subclasses) -----------------------------------------------

    def eval_forward(self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]) -> Tensors:
        """Every output, ``(B, *output_shape)``."""
        return self.evaluate(x, p).outputs

    def eval_jacobian(self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]) -> Blocks:
        """Every block ``[output][input]``; unbatched where :meth:`jacobian_batched` is False."""
        return self.evaluate(x, p, jacobian=True).jacobian

    def eval_param_jacobian(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]
    ) -> Blocks:
        """Every block ``[output][parameter]``.

        Unbatched where :meth:`param_jacobian_batched` is False.
        """
        return self.evaluate(x, p, param_jacobian=True).param_jacobian

    def evaluate(
        self,
        x: Mapping[str, torch.Tensor],
        p: Mapping[str, torch.Tensor],
        jacobian: bool = False,
        param_jacobian: bool = False,
    ) -> Evaluation:
        """Outputs, and the Jacobians asked for, from one evaluation.

        Explicit models get this from the three ``eval_*`` kernels; implicit models
        override it (and not the kernels) so that one solve serves every result.
        """
        if type(self).eval_forward is Model.eval_forward:
            raise NotImplementedError(f"{type(self).__name__} must override evaluate or eval_*")
        return Evaluation(
            self.eval_forward(x, p),
            self.eval_jacobian(x, p) if jacobian else {},
            self.eval_param_jacobian(x, p) if param_jacobian else {},
        )

    def jacobian_batched(self, of: str, wrt: str) -> bool:
        """Whether d(of)/d(wrt) depends on the batch (False: returned as ``(*of, *wrt)``)."""
        return True

    def param_jacobian_batched(self, of: str, param: str) -> bool:
        """Whether d(of)/d(param) depends on the batch."""
        return True

    # --- second derivatives (the models NEML2's Normality may wrap) --------------------

    def second_order(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]
    ) -> SecondOrder:
        """Outputs with first and second derivatives by inputs and parameters; only where
        :meth:`second_order_missing` is empty."""
        raise NotImplementedError(f"{type(self).__name__} has no second derivatives")

    def second_order_missing(self) -> list[str]:
        """The models (``<type> '<name>'``) in this one that lack second derivatives."""
        return [f"{self.type_name} '{self.name}'"]

    # --- derived kernels -------------------------------------------------------------

    def eval_jvp(
        self,
        x: Mapping[str, torch.Tensor],
        p: Mapping[str, torch.Tensor],
        tangents: Mapping[str, torch.Tensor],
        pairs: Sequence[Pair],
    ) -> Tensors:
        """For each output that is the ``of`` of a pair: the sum over its pairs of J . v."""
        return self.jvp_of(self.evaluate(x, p, jacobian=True).jacobian, tangents, pairs)

    def jvp_of(
        self, jac: Blocks, tangents: Mapping[str, torch.Tensor], pairs: Sequence[Pair]
    ) -> Tensors:
        """``sum_wrt J[of][wrt] . v[wrt]`` per output ``of`` of the pairs."""
        result: Tensors = {}
        for of, wrt in pairs:
            term = _apply(
                jac[of][wrt],
                tangents[wrt],
                self.variable(of).shape,
                self.variable(wrt).size,
                self.jacobian_batched(of, wrt),
            )
            result[of] = result[of] + term if of in result else term
        return result

    def eval_param_vjp(
        self,
        x: Mapping[str, torch.Tensor],
        p: Mapping[str, torch.Tensor],
        cotangents: Mapping[str, torch.Tensor],
        params: Sequence[str],
    ) -> Tensors:
        """Per parameter: the sum over outputs and batch of ``cotangent . d(output)/d(param)``."""
        pjac = self.evaluate(x, p, param_jacobian=True).param_jacobian
        return self.param_vjp_of(pjac, p, cotangents, params)

    def param_vjp_of(
        self,
        pjac: Blocks,
        p: Mapping[str, torch.Tensor],
        cotangents: Mapping[str, torch.Tensor],
        params: Sequence[str],
    ) -> Tensors:
        """``sum_b sum_out c . d(out)/d(param)`` per parameter, from the parameter Jacobian;
        for a parameter given per point in ``p`` the sum over outputs at each point,
        ``(B, *shape)``."""
        result: Tensors = {}
        points = set(self.per_point_parameters(p))
        for param in params:
            shape = self.parameter_shapes[param]
            total: torch.Tensor | None = None
            for out in self.outputs:
                term = _pull_back(
                    pjac[out.name][param],
                    cotangents[out.name],
                    out.size,
                    shape,
                    self.param_jacobian_batched(out.name, param),
                    per_point=param in points,
                )
                total = term if total is None else total + term
            assert total is not None
            result[param] = total
        return result

    # --- public, validated API (the same one the AOTI shim offers) ---------------------

    def named_parameters(self) -> Tensors:
        """The live parameter tensors; changing one in place changes the next evaluation."""
        return self.parameters

    def set_parameter(self, name: str, value: torch.Tensor) -> None:
        """Give parameter ``name`` the tensor ``value`` for the next evaluations: one value
        for every point, ``(*shape)``, or one per point, ``(B, *shape)``, whose B every
        call's batch must then be (doc/python.md, "Per-point parameters").

        Neml2Error for an unknown name, another dtype or device than the parameter's,
        another shape, or a model that cannot take the parameter per point; then nothing
        is changed.
        """
        from ..points import with_per_point  # builds on this module

        shape = self.parameter_shapes.get(name, ())
        current = self.parameters.get(name)
        per_point = check_parameter(self.name, name, value, current, shape, list(self.parameters))
        if per_point:
            others = [q for q in self.per_point_parameters(self.parameters) if q != name]
            with_per_point(self, [*others, name])  # refuses a model that cannot
        self.parameters[name] = value

    def _evaluator(self, call: Batch) -> Model:
        """The model that evaluates a call: this one, or, while some parameters hold one
        value per point, the model that takes them per point (:mod:`neml2.models.points`),
        their B agreed with the call's batch."""
        points = self.per_point_parameters(self.parameters)
        if not points:
            return self
        from ..points import with_per_point  # builds on this module

        for name in points:
            call.agree(f"parameter '{name}'", int(self.parameters[name].shape[0]))
        return with_per_point(self, points)

    def forward(self, inputs: Mapping[str, torch.Tensor]) -> Tensors:
        """Every output at the given inputs (each batched ``(B, *shape)`` or one point)."""
        call = Batch(self.name, self.dtype)
        x = self._checked(call, "input", inputs, self.inputs)
        ev = self._evaluator(call).evaluate(call.expand(x, self.inputs), self.parameters)
        raise_if_failed(self.name, ev.status)
        return call.unbatch(ev.outputs)

    def jvp(
        self, inputs: Mapping[str, torch.Tensor], tangents: Mapping[str, torch.Tensor]
    ) -> Tensors:
        """Directional derivative of every output along the tangents of the given inputs.

        An input without a tangent has a zero tangent; with no tangents at all every
        output's derivative is zero, as the compiled model returns it.
        """
        call = Batch(self.name, self.dtype)
        x = self._checked(call, "input", inputs, self.inputs)
        wrt = [v for v in self.inputs if v.name in tangents]
        v = self._checked(call, "tangent", tangents, wrt)
        model = self._evaluator(call)
        ev = model.evaluate(call.expand(x, self.inputs), self.parameters, jacobian=True)
        raise_if_failed(self.name, ev.status)
        pairs = [(o.name, i.name) for o in self.outputs for i in wrt]
        result = model.jvp_of(ev.jacobian, call.expand(v, wrt), pairs)
        n = 1 if call.size is None else call.size
        for o in self.outputs:
            if o.name not in result:
                result[o.name] = torch.zeros((n, *o.shape), dtype=self.dtype, device=call.device)
        return call.unbatch({o.name: result[o.name] for o in self.outputs})

    def jacobian(self, inputs: Mapping[str, torch.Tensor]) -> Blocks:
        """Every block ``[output][input]``; one that does not depend on the batch unbatched."""
        return self._blocks(inputs, params=False)

    def param_jacobian(self, inputs: Mapping[str, torch.Tensor]) -> Blocks:
        """Every block ``[output][parameter]``; one that does not depend on the batch unbatched."""
        return self._blocks(inputs, params=True)

    def _blocks(self, inputs: Mapping[str, torch.Tensor], params: bool) -> Blocks:
        """The blocks of jacobian() (``params`` false) or param_jacobian() (true)."""
        call = Batch(self.name, self.dtype)
        x = self._checked(call, "input", inputs, self.inputs)
        model = self._evaluator(call)
        ev = model.evaluate(
            call.expand(x, self.inputs), self.parameters, jacobian=not params, param_jacobian=params
        )
        raise_if_failed(self.name, ev.status)
        blocks = ev.param_jacobian if params else ev.jacobian
        batched = model.param_jacobian_batched if params else model.jacobian_batched
        return {
            of: {wrt: call.unbatch_one(b) if batched(of, wrt) else b for wrt, b in row.items()}
            for of, row in blocks.items()
        }

    def param_vjp(
        self, inputs: Mapping[str, torch.Tensor], cotangents: Mapping[str, torch.Tensor]
    ) -> Tensors:
        """Adjoint of every parameter; an output without a cotangent has a zero cotangent."""
        call = Batch(self.name, self.dtype)
        x = self._checked(call, "input", inputs, self.inputs)
        c = self._checked(call, "cotangent", cotangents, self.outputs, missing_is_zero=True)
        model = self._evaluator(call)
        ev = model.evaluate(call.expand(x, self.inputs), self.parameters, param_jacobian=True)
        raise_if_failed(self.name, ev.status)
        return model.param_vjp_of(
            ev.param_jacobian, self.parameters, call.expand(c, self.outputs), list(self.parameters)
        )

    @property
    def device(self) -> torch.device | None:
        """The device the model computes on: the one :meth:`to` moved it to, else its
        first parameter's; None for a model without parameters that was never moved."""
        moved: torch.device | None = self.__dict__.get("_device")
        if moved is not None:
            return moved
        first = next(iter(self.parameters.values()), None)
        return None if first is None else first.device

    def _checked(
        self,
        call: Batch,
        role: str,
        given: Mapping[str, torch.Tensor],
        expected: Sequence[Variable],
        missing_is_zero: bool = False,
    ) -> Tensors:
        """The public methods' one argument check, the compiled model's (neml2.shim) in
        the same order and words: no name the model does not know (inputs; outputs for a
        cotangent), each expected tensor present (unless ``missing_is_zero``) with its
        shape, then its dtype and device type. Internal evaluations skip it."""
        refuse_unknown(self.name, role, given, self.inputs, self.outputs)
        checked = call.take(given, expected, role, missing_is_zero=missing_is_zero)
        device = self.device
        for name, tensor in checked.items():
            wrong_device = device is not None and tensor.device.type != device.type
            if tensor.dtype != self.dtype or wrong_device:
                where = device.type if device is not None else tensor.device.type
                raise Neml2Error(
                    f"model '{self.name}': {role} '{name}' is {tensor.dtype} on "
                    f"{tensor.device}, expected {self.dtype} on {where}"
                )
        return checked

    # --- helpers ---------------------------------------------------------------------

    def variable(self, name: str) -> Variable:
        for var in (*self.inputs, *self.outputs):
            if var.name == name:
                return var
        raise KeyError(name)

    def to(self, device: torch.device | str) -> Model:
        """Move the parameters to ``device`` (in place) and return the model."""
        self.parameters = {k: v.to(device) for k, v in self.parameters.items()}
        self._device = torch.device(device)
        return self


class Leaf(Model):
    """An explicit model whose one kernel returns the outputs and the non-zero blocks.

    :meth:`kernel` returns ``(outputs, jacobian, param_jacobian)`` with only the
    non-zero blocks, each batched ``(B, *of, *wrt)``; the rest are filled with zeros.
    """

    def kernel(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        raise NotImplementedError

    def evaluate(
        self,
        x: Mapping[str, torch.Tensor],
        p: Mapping[str, torch.Tensor],
        jacobian: bool = False,
        param_jacobian: bool = False,
    ) -> Evaluation:
        outputs, jac, pjac = self.kernel(x, p, jacobian or param_jacobian)
        ev = Evaluation(outputs)
        like = next(iter(x.values()))
        n = like.shape[0]
        if jacobian:
            ev.jacobian = {
                o.name: {
                    i.name: jac[o.name][i.name]
                    if i.name in jac.get(o.name, {})
                    else like.new_zeros((n, *o.shape, *i.shape))
                    for i in self.inputs
                }
                for o in self.outputs
            }
        if param_jacobian:
            ev.param_jacobian = {
                o.name: {
                    q: pjac[o.name][q]
                    if q in pjac.get(o.name, {})
                    else like.new_zeros((n, *o.shape, *p[q].shape))
                    for q in self.parameters
                }
                for o in self.outputs
            }
        return ev
