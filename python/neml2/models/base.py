"""The material model base class and its derivative contractions.

A model declares ordered inputs and outputs (each with the base shape of one material
point) and named parameters. An explicit model writes three analytic kernels,
:meth:`Model.eval_forward`, :meth:`Model.eval_jacobian` and
:meth:`Model.eval_param_jacobian`; an implicit model (one that solves an equation per
point) instead overrides :meth:`Model.evaluate`, which returns everything asked for
from one solve together with the per-point convergence :class:`Status`. The base class
derives ``jvp`` and ``param_vjp`` from the Jacobians. Shapes follow doc/artifacts.md:
batched tensors are ``(B, *base)``, and a derivative block that does not depend on the
batch is returned unbatched.

Models that NEML2's ``Normality`` may wrap also give
:meth:`Model.second_order`, their second derivatives by inputs and parameters.

The kernels take their parameters explicitly and check nothing, so ``neml2.compile``
can trace them with parameters either baked or passed as graph inputs; the public
methods (``forward``, ``jvp``, ...) validate their arguments first, accept unbatched
``(*base)`` inputs next to batched ones as the C++ runtime does, and raise
:class:`~neml2.errors.ConvergenceError` when a point of an implicit model did not converge.

The registry of model types is :mod:`.registry`; the check of one call's batch
arguments is :class:`~neml2.models.batch.Batch`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch

from ..errors import ConvergenceError, HitError, Neml2Error
from ..hit import _NUMBER, Section
from ..solvers import checked_settings, solver_table
from ..tensors import base_shape
from .batch import Batch

Tensors = dict[str, torch.Tensor]
Blocks = dict[str, dict[str, torch.Tensor]]
Pair = tuple[str, str]


@dataclass(frozen=True)
class Variable:
    """A named model input or output and the shape of one material point.

    ``shape`` is ``(*sub_batch, *base)``: the sub-batch axes (see :mod:`.sub_batch`),
    empty for most variables, followed by the base shape of its tensor type.
    """

    name: str
    shape: tuple[int, ...]
    sub_batch: tuple[int, ...] = ()

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def base(self) -> tuple[int, ...]:
        """The base shape: ``shape`` without the sub-batch axes."""
        return self.shape[len(self.sub_batch) :]


@dataclass
class Status:
    """Per point of an implicit model: whether its solve converged, and its final residual."""

    converged: torch.Tensor  #: (B,) bool
    residual: torch.Tensor  #: (B,), the final residual norm

    def merge(self, other: Status | None) -> Status:
        """Both solves: converged where both converged, the larger residual."""
        if other is None:
            return self
        return Status(
            self.converged & other.converged, torch.maximum(self.residual, other.residual)
        )


@dataclass
class Evaluation:
    """What one evaluation produced: outputs, the Jacobians asked for, and the status."""

    outputs: Tensors
    jacobian: Blocks = field(default_factory=dict)
    param_jacobian: Blocks = field(default_factory=dict)
    status: Status | None = None


#: Second derivative blocks ``[output][a][b]``.
Blocks2 = dict[str, dict[str, dict[str, torch.Tensor]]]


@dataclass
class SecondOrder:
    """Outputs with their first and second derivatives by every argument, inputs and
    parameters alike (NEML2's ``Normality`` needs them of the model it wraps).

    Every block is batched: ``first[of][a]`` is ``(B, *of, *a)`` and ``second[of][a][b]``
    ``(B, *of, *a, *b)``, with ``second[of][b][a]`` its transpose. A block absent from
    either is zero.
    """

    outputs: Tensors
    first: Blocks
    second: Blocks2


class Model:
    """A material model with analytic derivatives; see the module docstring."""

    type_name: ClassVar[str]
    #: The dtype of every parameter and variable.
    dtype: ClassVar[torch.dtype] = torch.float64
    #: The keys its input-file block accepts besides ``type``.
    options: ClassVar[frozenset[str]] = frozenset()

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

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        """Build the model from its ``[Models/<name>]`` block."""
        raise NotImplementedError

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
        from .sub_batch import point_by_point  # builds on this module

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
        """``sum_b sum_out c . d(out)/d(param)`` per parameter, from the parameter Jacobian."""
        result: Tensors = {}
        for param in params:
            shape = tuple(p[param].shape)
            total: torch.Tensor | None = None
            for out in self.outputs:
                term = _pull_back(
                    pjac[out.name][param],
                    cotangents[out.name],
                    out.size,
                    shape,
                    self.param_jacobian_batched(out.name, param),
                )
                total = term if total is None else total + term
            assert total is not None
            result[param] = total
        return result

    # --- public, validated API (the same one the AOTI shim offers) ---------------------

    def named_parameters(self) -> Tensors:
        """The live parameter tensors; changing one in place changes the next evaluation."""
        return self.parameters

    def forward(self, inputs: Mapping[str, torch.Tensor]) -> Tensors:
        """Every output at the given inputs (each batched ``(B, *shape)`` or one point)."""
        call = Batch(self.name, self.dtype)
        x = self._checked(call, "input", inputs, self.inputs)
        ev = self.evaluate(call.expand(x, self.inputs), self.parameters)
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
        ev = self.evaluate(call.expand(x, self.inputs), self.parameters, jacobian=True)
        raise_if_failed(self.name, ev.status)
        pairs = [(o.name, i.name) for o in self.outputs for i in wrt]
        result = self.jvp_of(ev.jacobian, call.expand(v, wrt), pairs)
        n = 1 if call.size is None else call.size
        for o in self.outputs:
            if o.name not in result:
                result[o.name] = torch.zeros((n, *o.shape), dtype=self.dtype, device=call.device)
        return call.unbatch({o.name: result[o.name] for o in self.outputs})

    def jacobian(self, inputs: Mapping[str, torch.Tensor]) -> Blocks:
        """Every block ``[output][input]``; one that does not depend on the batch unbatched."""
        call = Batch(self.name, self.dtype)
        x = self._checked(call, "input", inputs, self.inputs)
        ev = self.evaluate(call.expand(x, self.inputs), self.parameters, jacobian=True)
        raise_if_failed(self.name, ev.status)
        return {
            of: {
                wrt: call.unbatch_one(block) if self.jacobian_batched(of, wrt) else block
                for wrt, block in row.items()
            }
            for of, row in ev.jacobian.items()
        }

    def param_jacobian(self, inputs: Mapping[str, torch.Tensor]) -> Blocks:
        """Every block ``[output][parameter]``; one that does not depend on the batch unbatched."""
        call = Batch(self.name, self.dtype)
        x = self._checked(call, "input", inputs, self.inputs)
        ev = self.evaluate(call.expand(x, self.inputs), self.parameters, param_jacobian=True)
        raise_if_failed(self.name, ev.status)
        return {
            of: {
                wrt: call.unbatch_one(block) if self.param_jacobian_batched(of, wrt) else block
                for wrt, block in row.items()
            }
            for of, row in ev.param_jacobian.items()
        }

    def param_vjp(
        self, inputs: Mapping[str, torch.Tensor], cotangents: Mapping[str, torch.Tensor]
    ) -> Tensors:
        """Adjoint of every parameter; an output without a cotangent has a zero cotangent."""
        call = Batch(self.name, self.dtype)
        x = self._checked(call, "input", inputs, self.inputs)
        c = self._checked(call, "cotangent", cotangents, self.outputs, missing_is_zero=True)
        ev = self.evaluate(call.expand(x, self.inputs), self.parameters, param_jacobian=True)
        raise_if_failed(self.name, ev.status)
        return self.param_vjp_of(
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


def refuse_unknown(
    model: str,
    role: str,
    given: Mapping[str, torch.Tensor],
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    renamed: Mapping[str, str] | None = None,
) -> None:
    """Refuse a name in ``given`` that ``model`` does not know: an output for a
    cotangent, an input for any other role (the eager and the compiled model's check).
    ``renamed`` maps the original names of the known variables that neml2-compile renamed
    to their new names, so that a caller still using an original name is told the new one."""
    known = outputs if role == "cotangent" else inputs
    unknown = sorted(set(given) - {v.name for v in known})
    if unknown:
        kind = "outputs" if role == "cotangent" else "inputs"
        name = unknown[0]
        note = ""
        if renamed and name in renamed:
            flag = "--rename-output" if role == "cotangent" else "--rename-input"
            note = f"; '{name}' is now called '{renamed[name]}' (neml2-compile {flag})"
        raise Neml2Error(
            f"model '{model}': unknown {role} '{name}' "
            f"(expected {kind}: {', '.join(v.name for v in known)}){note}"
        )


def raise_if_failed(model: str, status: Status | None) -> None:
    """Raise :class:`ConvergenceError` when some point of ``status`` did not converge."""
    if status is None or status.converged.numel() == 0:
        return
    failed = int((~status.converged).sum().item())
    if failed:
        worst = float(status.residual.max().item())
        converged = status.converged.reshape(-1).cpu()
        raise ConvergenceError(
            model,
            failed,
            status.converged.numel(),
            worst,
            converged=converged,
            residual=status.residual.reshape(-1).cpu()[~converged],
        )


def _apply(
    block: torch.Tensor, v: torch.Tensor, of_shape: tuple[int, ...], wrt_size: int, batched: bool
) -> torch.Tensor:
    """``J . v`` for one Jacobian block, flattened to matrices and reshaped back to ``(B, *of)``.

    Written as a per-point multiply-and-sum rather than a matrix product: a GEMM picks its
    kernel and summation order by the batch size, so one point's result would depend on
    the chunk it travels in; the dispatcher promises bitwise equal per-point results.
    """
    n = v.shape[0]
    of_size = math.prod(of_shape)
    flat_v = v.reshape(n, 1, wrt_size)
    if batched:
        out = (block.reshape(n, of_size, wrt_size) * flat_v).sum(-1)
    else:
        out = (block.reshape(1, of_size, wrt_size) * flat_v).sum(-1)
    return out.reshape((n, *of_shape))


def contract(
    left: torch.Tensor,
    left_batched: bool,
    right: torch.Tensor,
    right_batched: bool,
    sizes: tuple[int, int, int],
    shape: tuple[int, ...],
) -> torch.Tensor:
    """The chain rule's product ``(o x w) . (w x u)`` of two derivative blocks.

    ``sizes`` are the flattened sizes (o, w, u) and ``shape`` the result's base shape
    ``(*of, *wrt)``. Each block is batched ``(B, ...)`` or not; the result is batched
    when either is. A per-point multiply-and-sum, for the reason given in :func:`_apply`.
    """
    o, w, u = sizes
    a = left.reshape(-1, o, w, 1) if left_batched else left.reshape(1, o, w, 1)
    b = right.reshape(-1, 1, w, u) if right_batched else right.reshape(1, 1, w, u)
    out = (a * b).sum(-2)
    if left_batched or right_batched:
        return out.reshape((out.shape[0], *shape))
    return out.reshape(shape)


def _pull_back(
    block: torch.Tensor,
    cotangent: torch.Tensor,
    of_size: int,
    param_shape: tuple[int, ...],
    batched: bool,
) -> torch.Tensor:
    """``sum_b c_b . d(out_b)/d(param)`` for one parameter Jacobian block."""
    n = cotangent.shape[0]
    param_size = math.prod(param_shape)
    flat_c = cotangent.reshape(n, of_size)
    if batched:
        out = torch.matmul(flat_c.unsqueeze(1), block.reshape(n, of_size, param_size)).sum(0)
    else:
        out = torch.matmul(flat_c.sum(0, keepdim=True), block.reshape(of_size, param_size))
    return out.reshape(param_shape)


def spelling(section: Section, *keys: str) -> str | None:
    """Which of several spellings of one option the block uses (NEML2's first, then
    aliases); None when it uses none. Two spellings of one option are an error."""
    given = [k for k in keys if k in section.params]
    if len(given) > 1:
        raise section.error(
            given[1],
            f"parameter '{given[1]}': the same option as '{given[0]}'; give only one of them",
        )
    return given[0] if given else None


def variable_name(section: Section, key: str, default: str) -> str:
    """The variable name a key sets (one word), or ``default`` when the key is not given."""
    value = section.string(key, default)
    if not value.strip() or len(value.split()) != 1:
        raise section.error(key, f"parameter '{key}': expected one variable name, got '{value}'")
    return value.strip()


def from_and_to(
    section: Section, default_to: str | None = None, distinct: bool = True
) -> tuple[list[str], str]:
    """A combining model's ``from`` names (at least one, each once unless ``distinct`` is
    False) and its one ``to`` name (``default_to`` when absent; required when None),
    which must not be one of them."""
    sources = section.strings("from")
    if not sources:
        raise section.error("from", "parameter 'from': expected at least one variable name")
    if distinct:
        for index, source in enumerate(sources):
            if source in sources[:index]:
                raise section.error("from", f"parameter 'from': '{source}' is listed twice")
    if default_to is None:
        section.get("to")
    target = variable_name(section, "to", default_to or "")
    if target in sources:
        raise section.error("to", f"parameter 'to': '{target}' is also an input (listed in 'from')")
    return sources, target


def check_distinct(section: Section, names: Mapping[str, str]) -> None:
    """Refuse a variable name used for two roles (key -> name) of one model."""
    seen: dict[str, str] = {}
    for key, name in names.items():
        if name in seen:
            raise section.error(
                key,
                f"parameter '{key}': variable name '{name}' is already used for '{seen[name]}'",
            )
        seen[name] = key


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


def model_section(root: Section, name: str) -> Section:
    """The ``[Models/<name>]`` block of a parsed input file."""
    models = root.child("Models")
    if models is None:
        raise HitError(root.path, 1, f"no [Models] block: expected [Models] containing [{name}]")
    section = models.child(name)
    if section is None:
        defined = ", ".join(models.children) or "none"
        raise HitError(
            root.path, models.line, f"[Models] has no model '{name}'; models defined: {defined}"
        )
    return section


def root_of(section: Section) -> Section:
    """The file-level section above ``section``."""
    while section.parent is not None:
        section = section.parent
    return section


def tensor_option(
    section: Section, key: str, type_name: str, default: torch.Tensor | float | None = None
) -> torch.Tensor:
    """A tensor-valued option of NEML2 type ``type_name`` (see :mod:`neml2.tensors`).

    The value is either written in place, as many numbers as the type has components
    (one for a Scalar), or the name of a ``[Tensors]`` block, whose tensor may carry
    leading axes (a table of values, for instance) before its base shape. ``default``
    applies when the key is absent; without one the key is required.
    """
    from ..tensor_blocks import resolve_tensor  # the [Tensors] reader builds on this module

    shape = base_shape(type_name)
    if key not in section.params:
        if default is None:
            raise section.error(None, f"[{section.full_name}]: missing required parameter '{key}'")
        return torch.as_tensor(default, dtype=Model.dtype).expand(shape).clone()
    words = section.strings(key)
    if all(_NUMBER.fullmatch(w) for w in words):
        size = math.prod(shape)
        if len(words) != size:
            raise section.error(
                key,
                f"parameter '{key}': a {type_name} has {size} component"
                f"{'s' if size != 1 else ''}, got {len(words)} numbers",
            )
        values = [section.finite(key, w) for w in words]
        return torch.tensor(values, dtype=Model.dtype).reshape(shape)
    if len(words) != 1:
        raise section.error(
            key,
            f"parameter '{key}': expected {type_name} numbers or the name of a [Tensors] "
            f"block, got '{section.string(key)}'",
        )
    return resolve_tensor(section, key, words[0], type_name)
