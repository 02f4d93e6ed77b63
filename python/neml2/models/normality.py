"""Normality: the derivatives of a scalar function of a model as variables of their own.

``model`` names a block of ``[Models]`` (usually a ``ComposedModel`` from the stress to a
yield function), ``function`` one of its Scalar outputs and ``from`` some of its inputs;
the output ``to[i]`` is ``d function / d from[i]``, of the shape of ``from[i]``. The flow
direction of an associative flow rule is ``d yield_function / d mandel_stress``, the
isotropic hardening direction ``d yield_function / d isotropic_hardening``.

The inputs and parameters are those of the wrapped model. The Jacobian of an output is a
row of second derivatives of the function, ``d2 function / d from[i] d input``, so the
wrapped model must provide them (:meth:`~neml2.models.base.Model.second_order`): the
types listed by :func:`second_order_types`, and compositions of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch

from ..hit import Section
from .base import Evaluation, Model, Variable, variable_name
from .block import Block
from .composed import ComposedModel
from .implicit import _named
from .registry import _REGISTRY, build_model, register


def second_order_types() -> list[str]:
    """The model types with second derivatives (those ``Normality`` can wrap)."""
    leaves = [
        name
        for name, cls in _REGISTRY.items()
        if issubclass(cls, Block) and cls.compute_second is not Block.compute_second
    ]
    return sorted([*leaves, ComposedModel.type_name])


@register
class Normality(Model):
    """Keys: ``model``, ``function``, ``from`` and ``to`` (one name each); see the module
    docstring."""

    type_name = "Normality"
    options = frozenset({"model", "function", "from", "to"})

    def __init__(
        self, name: str, model: Model, function: str, pairs: Sequence[tuple[str, str]]
    ) -> None:
        self.model = model
        self.function = function
        #: (from, to) per output
        self.pairs = list(pairs)
        outputs = [Variable(to, model.variable(source).shape) for source, to in self.pairs]
        super().__init__(name, model.inputs, outputs, model.parameters)

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        target = _named(section, "model", "Models")
        if target.name == section.name:
            raise section.error("model", f"parameter 'model': '{target.name}' is this model itself")
        model = build_model(target)
        if model.implicit:
            raise section.error(
                "model", f"parameter 'model': '{model.name}' is implicit; not supported"
            )
        section.get("function")  # required
        function = variable_name(section, "function", "")
        outputs = {v.name: v for v in model.outputs}
        if function not in outputs:
            raise section.error(
                "function",
                f"parameter 'function': '{function}' is not an output of model '{model.name}'; "
                f"outputs: {', '.join(outputs)}",
            )
        if outputs[function].shape != ():
            raise section.error(
                "function",
                f"parameter 'function': '{function}' is not a Scalar "
                f"(shape {outputs[function].shape})",
            )
        sources, targets = section.strings("from", []), section.strings("to", [])
        if not sources:
            raise section.error("from", "parameter 'from': expected at least one variable name")
        if len(sources) != len(targets):
            raise section.error(
                "to",
                f"parameter 'to': {len(targets)} names for {len(sources)} variables in 'from'",
            )
        inputs = [v.name for v in model.inputs]
        for key, names in (("from", sources), ("to", targets)):
            for index, name in enumerate(names):
                if name in names[:index]:
                    raise section.error(key, f"parameter '{key}': '{name}' is listed twice")
        for source in sources:
            if source not in inputs:
                raise section.error(
                    "from",
                    f"parameter 'from': '{source}' is not an input of model '{model.name}'; "
                    f"inputs: {', '.join(inputs)}",
                )
        for name in targets:
            if name in inputs:
                raise section.error(
                    "to",
                    f"parameter 'to': '{name}' is an input of model '{model.name}' "
                    "(choose another name for the derivative)",
                )
        missing = model.second_order_missing()
        if missing:
            raise section.error(
                "model",
                f"parameter 'model': {', '.join(missing)} in '{model.name}' has no second "
                f"derivatives, which Normality needs; types that have them: "
                f"{', '.join(second_order_types())}",
            )
        return cls(section.name, model, function, list(zip(sources, targets, strict=True)))

    def evaluate(
        self,
        x: Mapping[str, torch.Tensor],
        p: Mapping[str, torch.Tensor],
        jacobian: bool = False,
        param_jacobian: bool = False,
    ) -> Evaluation:
        so = self.model.second_order(x, p)
        grad = so.first.get(self.function, {})
        hess = so.second.get(self.function, {})
        like = next(iter(x.values()))
        n = like.shape[0]
        ev = Evaluation({})
        for source, to in self.pairs:
            shape = self.model.variable(source).shape
            ev.outputs[to] = grad[source] if source in grad else like.new_zeros((n, *shape))
            row = hess.get(source, {})
            if jacobian:
                ev.jacobian[to] = {
                    v.name: row[v.name] if v.name in row else like.new_zeros((n, *shape, *v.shape))
                    for v in self.inputs
                }
            if param_jacobian:
                ev.param_jacobian[to] = {
                    q: row[q] if q in row else like.new_zeros((n, *shape, *p[q].shape))
                    for q in self.parameters
                }
        return ev
