"""What a model call and the compiled model share: refusing variable names the model does
not know, raising :class:`~neml2.errors.ConvergenceError` for points that did not
converge, and the per-point contractions of derivative blocks (``jvp`` and ``param_vjp``
from the Jacobians, and the chain rule's product)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import torch

from ...errors import ConvergenceError, Neml2Error
from ..batch import shape_text
from .values import Status, Variable


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


def check_parameter(
    model: str,
    name: str,
    value: object,
    current: torch.Tensor | None,
    shape: tuple[int, ...],
    known: Sequence[str],
    renamed: Mapping[str, str] | None = None,
) -> bool:
    """Check the new value of parameter ``name`` (``set_parameter`` of the eager and the
    compiled model), whose value now is ``current`` (None: no such parameter) and whose
    shape is ``shape``: a tensor of the shape ``(*shape)`` or ``(B, *shape)``, with the dtype
    and device of ``current``. Returns whether it holds one value per point. ``renamed``
    maps the original names of parameters neml2-compile renamed to their new names."""
    if current is None:
        note = ""
        if renamed and name in renamed:
            note = f"; '{name}' is now called '{renamed[name]}' (neml2-compile --rename-parameter)"
        raise Neml2Error(
            f"model '{model}': unknown parameter '{name}' "
            f"(expected parameters: {', '.join(known) or 'none'}){note}"
        )
    if not isinstance(value, torch.Tensor):
        raise Neml2Error(f"model '{model}': parameter '{name}' is not a tensor")
    given = tuple(value.shape)
    per_point = len(given) == len(shape) + 1 and given[1:] == shape
    if given != shape and not per_point:
        raise Neml2Error(
            f"model '{model}': parameter '{name}' has shape {shape_text(given)}, "
            f"expected {shape_text(shape)} or {shape_text(('B', *shape))}"
        )
    if value.dtype != current.dtype or value.device != current.device:
        raise Neml2Error(
            f"model '{model}': parameter '{name}' is {value.dtype} on {value.device}, "
            f"expected {current.dtype} on {current.device}"
        )
    return per_point


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
    per_point: bool = False,
) -> torch.Tensor:
    """``sum_b c_b . d(out_b)/d(param)`` for one parameter Jacobian block; with
    ``per_point`` each point's own ``c_b . d(out_b)/d(param_b)``, ``(B, *param_shape)``
    (the block is then batched)."""
    n = cotangent.shape[0]
    param_size = math.prod(param_shape)
    flat_c = cotangent.reshape(n, of_size)
    if per_point:
        block = block.reshape(-1, of_size, param_size).expand(n, of_size, param_size)
        return (flat_c.unsqueeze(-1) * block).sum(1).reshape((n, *param_shape))
    if batched:
        out = torch.matmul(flat_c.unsqueeze(1), block.reshape(n, of_size, param_size)).sum(0)
    else:
        out = torch.matmul(flat_c.sum(0, keepdim=True), block.reshape(of_size, param_size))
    return out.reshape(param_shape)
