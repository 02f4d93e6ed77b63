"""Linear combinations of variables: to = sum_i c_i from_i, e.g. mechanical = total - thermal.

``SR2LinearCombination`` combines Mandel 6-vectors, ``ScalarLinearCombination`` scalars.
The coefficients are constants of the model, not parameters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import torch

from ..hit import Section
from .base import Blocks, Model, Tensors, Variable, register


class LinearCombination(Model):
    """Keys: ``from`` (variable names), ``to`` (one name), ``coefficients`` (default all 1)."""

    options = frozenset({"from", "to", "coefficients"})
    shape: ClassVar[tuple[int, ...]]

    def __init__(
        self, name: str, sources: Sequence[str], target: str, coefficients: Sequence[float]
    ) -> None:
        self.coefficients = dict(zip(sources, coefficients, strict=True))
        self.target = target
        super().__init__(
            name, [Variable(s, self.shape) for s in sources], [Variable(target, self.shape)], {}
        )

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        sources = section.strings("from")
        if not sources:
            raise section.error("from", "parameter 'from': expected at least one variable name")
        for index, source in enumerate(sources):
            if source in sources[:index]:
                raise section.error("from", f"parameter 'from': '{source}' is listed twice")
        target = section.string("to")
        if len(target.split()) != 1:
            raise section.error("to", f"parameter 'to': expected one variable name, got '{target}'")
        if target in sources:
            raise section.error(
                "to", f"parameter 'to': '{target}' is also an input (listed in 'from')"
            )
        coefficients = section.numbers("coefficients", [1.0] * len(sources), count=len(sources))
        return cls(section.name, sources, target, coefficients)

    def _eye(self, like: torch.Tensor) -> torch.Tensor:
        size = 1 if not self.shape else self.shape[0]
        eye = torch.eye(size, dtype=like.dtype).to(like.device)
        return eye if self.shape else eye.reshape(())

    def eval_forward(self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]) -> Tensors:
        total: torch.Tensor | None = None
        for source, c in self.coefficients.items():
            term = c * x[source]
            total = term if total is None else total + term
        assert total is not None
        return {self.target: total}

    def eval_jacobian(self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]) -> Blocks:
        eye = self._eye(next(iter(x.values())))
        return {self.target: {s: c * eye for s, c in self.coefficients.items()}}

    def eval_param_jacobian(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]
    ) -> Blocks:
        return {self.target: {}}

    def jacobian_batched(self, of: str, wrt: str) -> bool:
        return False


@register
class SR2LinearCombination(LinearCombination):
    """A linear combination of Mandel 6-vectors (symmetric second-order tensors)."""

    type_name = "SR2LinearCombination"
    shape = (6,)


@register
class ScalarLinearCombination(LinearCombination):
    """A linear combination of scalars."""

    type_name = "ScalarLinearCombination"
    shape = ()
