"""A model evaluated point by point: :func:`torch.func.vmap` over the points, each evaluated
as a batch of one. Models that give each point its own parameter values use it (per-point
parameters, :mod:`neml2.models.points`; parameters coupled to variables,
:mod:`neml2.models.coupling`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import torch

from .values import Blocks, Evaluation, Status, Tensors

if TYPE_CHECKING:  # the model module imports this one
    from .model import Model


def each_point(
    inner: Model,
    own: Tensors,
    mapped: Tensors,
    fixed: Mapping[str, torch.Tensor],
    jacobian: bool,
    param_jacobian: bool,
    placeholders: Mapping[str, torch.Tensor] | None = None,
) -> Evaluation:
    """``inner`` evaluated on each point alone.

    ``own`` holds its inputs and ``mapped`` the parameters with one value per point, each
    ``(B, ...)``; ``fixed`` the parameters shared by every point. Every result comes with
    the batch axis, Jacobian blocks that do not depend on the point included, and a status
    where ``inner`` reports one. vmap needs a point: for B = 0, one placeholder point is
    evaluated (its inputs zeros, its mapped parameters ``placeholders``, or ones) and none
    of it kept.
    """

    def point(own: Tensors, values: Tensors) -> tuple[Tensors, Blocks, Blocks, Tensors]:
        one = {k: v.unsqueeze(0) for k, v in own.items()}
        ev = inner.evaluate(one, {**fixed, **values}, jacobian, param_jacobian)
        outs = {k: v.squeeze(0) for k, v in ev.outputs.items()}
        jac = {
            o: {i: b.squeeze(0) if inner.jacobian_batched(o, i) else b for i, b in row.items()}
            for o, row in ev.jacobian.items()
        }
        pjac = {
            o: {
                q: b.squeeze(0) if inner.param_jacobian_batched(o, q) else b for q, b in row.items()
            }
            for o, row in ev.param_jacobian.items()
        }
        status: Tensors = {}
        if ev.status is not None:
            status = {"converged": ev.status.converged[0], "residual": ev.status.residual[0]}
        return outs, jac, pjac, status

    n = next(iter((*own.values(), *mapped.values()))).shape[0]
    empty = not torch.compiler.is_compiling() and n == 0
    if empty:
        own = {k: v.new_zeros((1, *v.shape[1:])) for k, v in own.items()}
        mapped = {
            q: placeholders[q].unsqueeze(0) if placeholders else v.new_ones((1, *v.shape[1:]))
            for q, v in mapped.items()
        }
    outs, jac, pjac, status = torch.func.vmap(point)(own, mapped)
    if empty:
        outs, jac, pjac, status = (_first(tree, 0) for tree in (outs, jac, pjac, status))
    result = Evaluation(outs, jac, pjac)
    if status:
        result.status = Status(status["converged"], status["residual"])
    return result


def _first(tree: dict[str, Any], count: int) -> dict[str, Any]:
    """Every tensor of a nested dict cut to its first ``count`` entries."""
    return {k: _first(v, count) if isinstance(v, dict) else v[:count] for k, v in tree.items()}
