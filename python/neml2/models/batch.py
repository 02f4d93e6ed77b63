"""The batch of one call to a model's public methods: each tensor argument checked against
its variable, batched ``(B, *shape)`` or unbatched ``(*shape)``, and one batch size B
agreed on, as the C++ runtime checks them. :class:`~neml2.models.base.Model` and the
compiled model (:mod:`neml2.shim`) check their arguments with it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import torch

from ..errors import Neml2Error

if TYPE_CHECKING:
    from .base import Tensors, Variable


def _names(variables: Sequence[Variable]) -> str:
    return ", ".join(v.name for v in variables) or "none"


def shape_text(shape: Sequence[int | str]) -> str:
    """A shape as the C++ runtime writes it: ``(6,)``, ``(B, 6)``, ``()``."""
    inner = ", ".join(map(str, shape))
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


class Batch:
    """One call's batch: checks each tensor against its variable and agrees on one size B.

    A tensor is either batched, ``(B, *shape)``, or unbatched, ``(*shape)``, as in the
    C++ runtime; unbatched ones are expanded to every point. When nothing is batched
    the call is evaluated as B = 1 and :meth:`unbatch` drops that dimension again.
    ``dtype`` is that of the zeros :meth:`expand` gives a missing tensor.
    """

    def __init__(self, model: str, dtype: torch.dtype) -> None:
        self.model = model
        self.dtype = dtype
        self.size: int | None = None
        self.owner = ""
        self.device: torch.device | None = None

    @property
    def batched(self) -> bool:
        return self.size is not None

    def take(
        self,
        given: Mapping[str, torch.Tensor],
        expected: Sequence[Variable],
        role: str,
        missing_is_zero: bool = False,
    ) -> Tensors:
        """The tensors named by ``expected``, checked; missing ones are an error or zero."""
        checked: Tensors = {}
        for var in expected:
            if var.name not in given:
                if missing_is_zero:
                    continue
                raise Neml2Error(
                    f"model '{self.model}': missing {role} '{var.name}' "
                    f"(expected {role}s: {_names(expected)})"
                )
            value = given[var.name]
            item = f"{role} '{var.name}'"
            if not isinstance(value, torch.Tensor):
                raise Neml2Error(f"model '{self.model}': {item} is not a tensor")
            if self.device is None:
                self.device = value.device
            shape = tuple(value.shape)
            if shape == var.shape:
                checked[var.name] = value
                continue
            if len(shape) != len(var.shape) + 1 or shape[1:] != var.shape:
                raise Neml2Error(
                    f"model '{self.model}': {item} has shape {shape_text(shape)}, "
                    f"expected {shape_text(var.shape)} or {shape_text(('B', *var.shape))}"
                )
            self.agree(item, shape[0])
            checked[var.name] = value
        return checked

    def agree(self, item: str, size: int) -> None:
        """Take ``size`` as the batch size of ``item`` (``input 'strain'``, ``parameter
        'model.E'``): the call's B, or a Neml2Error naming both where another item set
        another size."""
        if self.size is not None and size != self.size:
            raise Neml2Error(
                f"model '{self.model}': batch sizes disagree: {item} has {size} "
                f"but {self.owner} has {self.size}"
            )
        self.size, self.owner = size, item

    def expand(self, tensors: Mapping[str, torch.Tensor], expected: Sequence[Variable]) -> Tensors:
        """Every tensor as ``(B, *shape)``; a missing one (zero by convention) as zeros."""
        n = 1 if self.size is None else self.size
        out: Tensors = {}
        for var in expected:
            value = tensors.get(var.name)
            if value is None:
                out[var.name] = torch.zeros((n, *var.shape), dtype=self.dtype, device=self.device)
            elif tuple(value.shape) == var.shape:
                out[var.name] = value.unsqueeze(0).expand((n, *var.shape))
            else:
                out[var.name] = value
        return out

    def unbatch_one(self, tensor: torch.Tensor) -> torch.Tensor:
        """A per-point result without its batch dimension when nothing was batched."""
        return tensor if self.batched else tensor.squeeze(0)

    def unbatch(self, tensors: Mapping[str, torch.Tensor]) -> Tensors:
        return {name: self.unbatch_one(t) for name, t in tensors.items()}
