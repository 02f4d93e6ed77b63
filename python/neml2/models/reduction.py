"""Reductions and differences over a sub-batch axis (the dynamic and intermediate
mean, sum and difference).

Each takes ``from`` with at least one sub-batch axis (see :mod:`.sub_batch`) and writes
``to``:

* ``SR2IntermediateMean`` / ``SR2IntermediateSum``: the mean / sum over the last
  sub-batch axis, which ``to`` no longer has (NEML2's ``reduces`` names that axis).
* ``SR2IntermediateDiff``: the ``n``-th finite difference along sub-batch axis ``dim``,
  which becomes ``n`` shorter.
* ``SR2DynamicMean`` / ``SR2DynamicSum``: the mean / sum over axis ``dim`` of the
  per-point axes NEML2 calls dynamic. The batch axis belongs to the dispatcher, which
  slices it into chunks, so ``dim`` counts the sub-batch axes only (0 is the first).

All are linear, so their Jacobian is one constant block, the operation applied to the
identity: it is unbatched, and parameter-free.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import ClassVar

import torch

from ..hit import Section
from ..tensors import TYPES
from .base import Blocks, Model, Tensors, Variable, check_distinct, variable_name
from .registry import register

Shape = tuple[int, ...]


class _SubBatchReduction(Model):
    """``to = op(from)`` along one sub-batch axis of ``from``."""

    options: ClassVar[frozenset[str]] = frozenset({"from", "to"})
    base: ClassVar[Shape] = TYPES["SR2"]

    def __init__(self, name: str, source: str, target: str, settings: Mapping[str, int]) -> None:
        self.source, self.target = source, target
        self.settings = dict(settings)
        self.sub: Shape | None = None
        super().__init__(name, [Variable(source, self.base)], [Variable(target, self.base)], {})

    @classmethod
    def read_settings(cls, section: Section) -> dict[str, int]:
        """The integer options of this reduction (subclasses)."""
        return {}

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        names = {"from": variable_name(section, "from", ""), "to": variable_name(section, "to", "")}
        for key in names:
            if key not in section.params:
                raise section.error(
                    None, f"[{section.full_name}]: missing required parameter '{key}'"
                )
        check_distinct(section, names)
        return cls(section.name, names["from"], names["to"], cls.read_settings(section))

    # --- the axis and the operation (subclasses) ------------------------------------

    def axis(self, sub: Shape) -> int:
        """The index into ``sub`` of the axis this reduction works along."""
        return len(sub) - 1

    def out_sub(self, sub: Shape, axis: int) -> Shape:
        """The sub-batch axes of ``to``."""
        return sub[:axis] + sub[axis + 1 :]

    def apply(self, value: torch.Tensor, dim: int) -> torch.Tensor:
        raise NotImplementedError

    # --- shapes ---------------------------------------------------------------------

    def with_sub_batch(self, subs: Mapping[str, Shape]) -> Model:
        sub = tuple(subs.get(self.source, ()))
        if not sub:
            raise ValueError(
                f"{self.type_name} '{self.name}': input '{self.source}' has no sub-batch axis "
                f"to work along; declare one in [Settings]/[example_batch_shape], "
                f"e.g. {self.source} = '(2; 4)'"
            )
        axis = self.axis(sub)
        shaped = type(self)(self.name, self.source, self.target, self.settings)
        shaped.sub = sub
        shaped.inputs = [Variable(self.source, (*sub, *self.base), sub)]
        out = self.out_sub(sub, axis)
        shaped.outputs = [Variable(self.target, (*out, *self.base), out)]
        return shaped

    def _dim(self) -> int:
        if self.sub is None:
            raise ValueError(
                f"{self.type_name} '{self.name}': input '{self.source}' has no sub-batch axis"
            )
        return 1 + self.axis(self.sub)

    # --- kernels --------------------------------------------------------------------

    def eval_forward(self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]) -> Tensors:
        return {self.target: self.apply(x[self.source], self._dim())}

    def eval_jacobian(self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]) -> Blocks:
        like = x[self.source]
        shape = self.inputs[0].shape
        size = math.prod(shape)
        eye = torch.eye(size, dtype=like.dtype).to(like.device).reshape((size, *shape))
        images = self.apply(eye, self._dim())  # (size, *to): column j is op(e_j)
        block = images.reshape(size, -1).transpose(0, 1)
        return {self.target: {self.source: block.reshape((*self.outputs[0].shape, *shape))}}

    def eval_param_jacobian(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]
    ) -> Blocks:
        return {self.target: {}}

    def jacobian_batched(self, of: str, wrt: str) -> bool:
        return False


def _read_dim(section: Section) -> int:
    return section.integer("dim")


class _LastAxis(_SubBatchReduction):
    """Reduces the last sub-batch axis; NEML2's ``reduces`` labels it."""

    options = frozenset({"from", "to", "reduces"})

    @classmethod
    def read_settings(cls, section: Section) -> dict[str, int]:
        section.string("reduces")  # required by NEML2; the label has no other effect here
        return {}


class _DimAxis(_SubBatchReduction):
    """Works along sub-batch axis ``dim`` (negative counts from the last)."""

    options = frozenset({"from", "to", "dim"})

    @classmethod
    def read_settings(cls, section: Section) -> dict[str, int]:
        return {"dim": _read_dim(section)}

    def axis(self, sub: Shape) -> int:
        dim = self.settings["dim"]
        if not -len(sub) <= dim < len(sub):
            raise ValueError(
                f"{self.type_name} '{self.name}': dim = {dim} is outside the "
                f"{len(sub)} sub-batch axes of '{self.source}' {sub} (the batch axis is never "
                "reduced: it is sliced across devices)"
            )
        return dim % len(sub)


@register
class SR2IntermediateMean(_LastAxis):
    """The mean over the last sub-batch axis."""

    type_name = "SR2IntermediateMean"

    def apply(self, value: torch.Tensor, dim: int) -> torch.Tensor:
        return value.mean(dim=dim)


@register
class SR2IntermediateSum(_LastAxis):
    """The sum over the last sub-batch axis."""

    type_name = "SR2IntermediateSum"

    def apply(self, value: torch.Tensor, dim: int) -> torch.Tensor:
        return value.sum(dim=dim)


@register
class SR2DynamicMean(_DimAxis):
    """The mean over sub-batch axis ``dim``."""

    type_name = "SR2DynamicMean"

    def apply(self, value: torch.Tensor, dim: int) -> torch.Tensor:
        return value.mean(dim=dim)


@register
class SR2DynamicSum(_DimAxis):
    """The sum over sub-batch axis ``dim``."""

    type_name = "SR2DynamicSum"

    def apply(self, value: torch.Tensor, dim: int) -> torch.Tensor:
        return value.sum(dim=dim)


@register
class SR2IntermediateDiff(_DimAxis):
    """The ``n``-th finite difference (default 1) along sub-batch axis ``dim``."""

    type_name = "SR2IntermediateDiff"
    options = frozenset({"from", "to", "dim", "n", "reduces"})

    @classmethod
    def read_settings(cls, section: Section) -> dict[str, int]:
        n = section.integer("n", 1)
        if n < 0:
            raise section.error("n", f"parameter 'n': expected a non-negative order, got {n}")
        return {"dim": _read_dim(section), "n": n}

    def axis(self, sub: Shape) -> int:
        axis = super().axis(sub)
        if sub[axis] <= self.settings["n"]:
            raise ValueError(
                f"{self.type_name} '{self.name}': a difference of order {self.settings['n']} "
                f"needs more than {self.settings['n']} entries along sub-batch axis {axis} of "
                f"'{self.source}' {sub}"
            )
        return axis

    def out_sub(self, sub: Shape, axis: int) -> Shape:
        return (*sub[:axis], sub[axis] - self.settings["n"], *sub[axis + 1 :])

    def apply(self, value: torch.Tensor, dim: int) -> torch.Tensor:
        n = self.settings["n"]
        return torch.diff(value, n=n, dim=dim) if n else value
