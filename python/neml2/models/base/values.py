"""The values models take and return: the ``Tensors`` and ``Blocks`` dictionaries, a
:class:`Variable` (a named input or output and the shape of one point), the per-point
:class:`Status` of a solve, an :class:`Evaluation` and the second derivatives of
:class:`SecondOrder`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

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
