"""Per-point parameters: a parameter given one value per material point, ``(B, *shape)``,
rather than one value for every point, ``(*shape)`` (``set_parameter``, doc/python.md).

The kernels of most models take their parameters shared: an ``E`` of shape ``()`` scales a
``(B, 6)`` strain. :func:`with_per_point` turns a model into one that takes the named
parameters per point, changing the model tree as little as it can:

- an explicit model (no Newton solve inside) that uses a named parameter is evaluated
  point by point, :class:`PointWise`: ``torch.func.vmap`` over the points, each point a
  batch of one with its own parameter values and the shared ones as they are;
- a ``ComposedModel`` is rebuilt from its models so transformed, so that the batch
  dependence of its chained blocks is worked out again;
- an ``ImplicitUpdate`` keeps its Newton iteration outside the points (torch's
  ``while_loop`` has no vmap rule) and gets its residual model so transformed;
- a model whose kernel takes per-point parameters itself (``takes_per_point``) stays as
  it is; any other model with a solve inside is refused.

Every derivative block of a :class:`PointWise` model comes with the batch axis, since each
point has its own parameters; a parameter's ``param_vjp`` adjoint is per point,
``(B, *shape)``, where the parameter is given per point, and summed over the batch where
it is shared (:meth:`~neml2.models.base.Model.param_vjp_of`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

import torch

from ..errors import Neml2Error
from .base import Evaluation, Model
from .base.each_point import each_point
from .base.wrapper import Wrapper
from .composed import ComposedModel
from .implicit import ImplicitUpdate


class PointWise(Wrapper):
    """``inner`` evaluated point by point, so that its parameters may differ per point.

    The parameters of ``p`` that have one more leading axis than their declared shape are
    given per point; vmap maps them and the inputs over their first axis and evaluates
    ``inner`` on each point as a batch of one, the shared parameters unmapped.
    """

    def __init__(self, inner: Model) -> None:
        super().__init__(inner, inner.inputs, inner.outputs)

    def jacobian_batched(self, of: str, wrt: str) -> bool:
        return True

    def param_jacobian_batched(self, of: str, param: str) -> bool:
        return True

    def evaluate(
        self,
        x: Mapping[str, torch.Tensor],
        p: Mapping[str, torch.Tensor],
        jacobian: bool = False,
        param_jacobian: bool = False,
    ) -> Evaluation:
        inner = self.inner
        mapped = {q: p[q] for q in self.per_point_parameters(p) if q in inner.parameters}
        shared = {q: t for q, t in p.items() if q not in mapped}
        own = {v.name: x[v.name] for v in inner.inputs}
        return each_point(inner, own, mapped, shared, jacobian, param_jacobian)


def with_per_point(model: Model, names: Sequence[str]) -> Model:
    """``model`` taking the parameters ``names`` per point (see the module docstring); the
    model itself where it uses none of them. Neml2Error for a model with a Newton solve
    inside that cannot take them (a model other than a ``ComposedModel`` or an
    ``ImplicitUpdate`` whose own kernel does not take per-point parameters)."""
    return _transform(model, frozenset(names), model.name)


def _transform(model: Model, names: frozenset[str], top: str) -> Model:
    used = names & set(model.parameters)
    if not used or model.takes_per_point:
        return model
    if not model.solver_users():
        return PointWise(model)
    if type(model) is ComposedModel:
        models = [_transform(m, names, top) for m in model.models]
        return ComposedModel(model.name, models, [o.name for o in model.outputs])
    if type(model) is ImplicitUpdate:
        update = copy.copy(model)
        update.system = _transform(model.system, names, top)
        return update
    listed = ", ".join(q for q in model.parameters if q in used)
    raise Neml2Error(
        f"model '{top}': per-point parameters are not supported for {model.type_name} "
        f"'{model.name}', which runs a Newton solve inside (parameters {listed}); give "
        "them one value for every point"
    )
