"""The material model base class, its derivative contractions and the registry of model types.

A model declares ordered inputs and outputs (each with the base shape of one material
point) and named parameters. A subclass writes three analytic kernels,
:meth:`Model.eval_forward`, :meth:`Model.eval_jacobian` and
:meth:`Model.eval_param_jacobian`; the base class derives ``jvp`` and ``param_vjp``
from them. Shapes follow doc/artifacts.md: batched tensors are ``(B, *base)``, and a
derivative block that does not depend on the batch is returned unbatched.

The ``eval_*`` kernels take their parameters explicitly and check nothing, so
``neml2.compile`` can trace them with parameters either baked or passed as graph
inputs; the public methods (``forward``, ``jvp``, ...) validate their arguments first.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import torch

from ..errors import HitError, Neml2Error
from ..hit import Section

Tensors = dict[str, torch.Tensor]
Blocks = dict[str, dict[str, torch.Tensor]]
Pair = tuple[str, str]


@dataclass(frozen=True)
class Variable:
    """A named model input or output and its base shape."""

    name: str
    shape: tuple[int, ...]

    @property
    def size(self) -> int:
        return math.prod(self.shape)


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

    # --- analytic kernels (subclasses) -----------------------------------------------

    def eval_forward(self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]) -> Tensors:
        """Every output, ``(B, *output_shape)``."""
        raise NotImplementedError

    def eval_jacobian(self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]) -> Blocks:
        """Every block ``[output][input]``; unbatched where :meth:`jacobian_batched` is False."""
        raise NotImplementedError

    def eval_param_jacobian(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]
    ) -> Blocks:
        """Every block ``[output][parameter]``.

        Unbatched where :meth:`param_jacobian_batched` is False.
        """
        raise NotImplementedError

    def jacobian_batched(self, of: str, wrt: str) -> bool:
        """Whether d(of)/d(wrt) depends on the batch (False: returned as ``(*of, *wrt)``)."""
        return True

    def param_jacobian_batched(self, of: str, param: str) -> bool:
        """Whether d(of)/d(param) depends on the batch."""
        return True

    # --- derived kernels -------------------------------------------------------------

    def eval_jvp(
        self,
        x: Mapping[str, torch.Tensor],
        p: Mapping[str, torch.Tensor],
        tangents: Mapping[str, torch.Tensor],
        pairs: Sequence[Pair],
    ) -> Tensors:
        """For each output that is the ``of`` of a pair: the sum over its pairs of J . v."""
        jac = self.eval_jacobian(x, p)
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
        pjac = self.eval_param_jacobian(x, p)
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
        x = check_batch(self.name, inputs, self.inputs, "input")
        return self.eval_forward(x, self.parameters)

    def jvp(
        self, inputs: Mapping[str, torch.Tensor], tangents: Mapping[str, torch.Tensor]
    ) -> Tensors:
        """Directional derivative of every output along the tangents of the given inputs."""
        x = check_batch(self.name, inputs, self.inputs, "input")
        wrt = [v for v in self.inputs if v.name in tangents]
        unknown = sorted(set(tangents) - {v.name for v in self.inputs})
        if unknown:
            raise Neml2Error(f"model '{self.name}': tangent '{unknown[0]}' is not an input")
        v = check_batch(self.name, tangents, wrt, "tangent")
        pairs = [(o.name, i.name) for o in self.outputs for i in wrt]
        return self.eval_jvp(x, self.parameters, v, pairs)

    def jacobian(self, inputs: Mapping[str, torch.Tensor]) -> Blocks:
        x = check_batch(self.name, inputs, self.inputs, "input")
        return self.eval_jacobian(x, self.parameters)

    def param_jacobian(self, inputs: Mapping[str, torch.Tensor]) -> Blocks:
        x = check_batch(self.name, inputs, self.inputs, "input")
        return self.eval_param_jacobian(x, self.parameters)

    def param_vjp(
        self, inputs: Mapping[str, torch.Tensor], cotangents: Mapping[str, torch.Tensor]
    ) -> Tensors:
        x = check_batch(self.name, inputs, self.inputs, "input")
        c = check_batch(self.name, cotangents, self.outputs, "cotangent")
        return self.eval_param_vjp(x, self.parameters, c, list(self.parameters))

    # --- helpers ---------------------------------------------------------------------

    def variable(self, name: str) -> Variable:
        for var in (*self.inputs, *self.outputs):
            if var.name == name:
                return var
        raise KeyError(name)

    def to(self, device: torch.device | str) -> Model:
        """Move the parameters to ``device`` (in place) and return the model."""
        self.parameters = {k: v.to(device) for k, v in self.parameters.items()}
        return self


def check_batch(
    model: str, given: Mapping[str, torch.Tensor], expected: Sequence[Variable], role: str
) -> Tensors:
    """The tensors named by ``expected``, checked to be ``(B, *shape)`` with one common B."""
    checked: Tensors = {}
    batch: tuple[str, int] | None = None
    for var in expected:
        if var.name not in given:
            raise Neml2Error(f"model '{model}': missing {role} '{var.name}'")
        value = given[var.name]
        if not isinstance(value, torch.Tensor):
            raise Neml2Error(f"model '{model}': {role} '{var.name}' is not a tensor")
        want = "(" + ", ".join(["B", *map(str, var.shape)]) + ")"
        if value.dim() != len(var.shape) + 1 or tuple(value.shape[1:]) != var.shape:
            raise Neml2Error(
                f"model '{model}': {role} '{var.name}' has shape {tuple(value.shape)}, "
                f"expected {want}"
            )
        if batch is not None and value.shape[0] != batch[1]:
            raise Neml2Error(
                f"model '{model}': {role} '{var.name}' has batch size {value.shape[0]} but "
                f"'{batch[0]}' has {batch[1]}"
            )
        batch = (var.name, value.shape[0])
        checked[var.name] = value
    return checked


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


_REGISTRY: dict[str, type[Model]] = {}


def register(cls: type[Model]) -> type[Model]:
    """Class decorator: make ``cls`` buildable from ``type = <cls.type_name>``."""
    _REGISTRY[cls.type_name] = cls
    return cls


def model_types() -> list[str]:
    return sorted(_REGISTRY)


def build_model(section: Section) -> Model:
    """Build the model described by a ``[Models/<name>]`` block."""
    type_name = section.string("type")
    cls = _REGISTRY.get(type_name)
    if cls is None:
        raise section.error(
            "type",
            f"[{section.full_name}]: unknown model type '{type_name}'; "
            f"known types: {', '.join(model_types())}",
        )
    for key in section.params:
        if key != "type" and key not in cls.options:
            raise section.error(
                key,
                f"[{section.full_name}]: unknown parameter '{key}' for {type_name}; "
                f"expected one of: {', '.join(sorted(cls.options))}",
            )
    return cls.from_hit(section)


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
