"""Linear combinations: to = sum_i w_i from_i + offset, e.g. mechanical = total - thermal.

``SR2LinearCombination`` combines Mandel 6-vectors, ``ScalarLinearCombination`` scalars.
NEML2's spelling, ``weights`` (one per input, or one for all) and ``offset`` (added to
every component), makes both parameters: ``<block>.weights`` (shape ``(n,)``) and
``<block>.offset``. The earlier spelling ``coefficients`` keeps the weights constants of
the model, as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import torch

from ..hit import Section
from .base import Blocks, Model, Tensors, Variable, from_and_to, spelling
from .registry import register


class LinearCombination(Model):
    """Keys: ``from`` (variable names), ``to`` (one name), ``weights`` (alias
    ``coefficients``; default 1 for every input) and ``offset`` (default 0)."""

    options = frozenset({"from", "to", "weights", "coefficients", "offset"})
    shape: ClassVar[tuple[int, ...]]

    def __init__(
        self,
        name: str,
        sources: Sequence[str],
        target: str,
        coefficients: Sequence[float],
        offset: float | None = None,
        weights_as_parameters: bool = False,
    ) -> None:
        self.coefficients = dict(zip(sources, coefficients, strict=True))
        self.target = target
        self.weights = f"{name}.weights" if weights_as_parameters else None
        self.offset = f"{name}.offset" if offset is not None else None
        params: dict[str, torch.Tensor] = {}
        if self.weights is not None:
            params[self.weights] = torch.tensor(list(coefficients), dtype=torch.float64)
        if self.offset is not None:
            params[self.offset] = torch.tensor(float(offset or 0.0), dtype=torch.float64)
        super().__init__(
            name, [Variable(s, self.shape) for s in sources], [Variable(target, self.shape)], params
        )

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        sources, target = from_and_to(section)
        key = spelling(section, "weights", "coefficients")
        neml2 = key != "coefficients"
        if key is None:
            coefficients = [1.0] * len(sources)
        else:
            coefficients = section.numbers(key)
            if neml2 and len(coefficients) == 1:
                coefficients = coefficients * len(sources)
            if len(coefficients) != len(sources):
                one = " (or 1)" if neml2 else ""
                raise section.error(
                    key,
                    f"parameter '{key}': expected {len(sources)}{one} values, "
                    f"got {len(coefficients)}",
                )
        offset = section.number("offset") if "offset" in section.params else None
        if neml2 and offset is None:
            offset = 0.0
        return cls(section.name, sources, target, coefficients, offset, neml2)

    def _eye(self, like: torch.Tensor) -> torch.Tensor:
        size = 1 if not self.shape else self.shape[0]
        eye = torch.eye(size, dtype=like.dtype).to(like.device)
        return eye if self.shape else eye.reshape(())

    def _weights(self, p: Mapping[str, torch.Tensor]) -> list[torch.Tensor | float]:
        if self.weights is None:
            return list(self.coefficients.values())
        w = p[self.weights]
        return [w[i] for i in range(len(self.coefficients))]

    def eval_forward(self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]) -> Tensors:
        total: torch.Tensor | None = None
        for source, c in zip(self.coefficients, self._weights(p), strict=True):
            term = c * x[source]
            total = term if total is None else total + term
        assert total is not None
        if self.offset is not None:
            total = total + p[self.offset]
        return {self.target: total}

    def eval_jacobian(self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]) -> Blocks:
        eye = self._eye(next(iter(x.values())))
        weights = self._weights(p)
        return {self.target: {s: c * eye for s, c in zip(self.coefficients, weights, strict=True)}}

    def eval_param_jacobian(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]
    ) -> Blocks:
        blocks: dict[str, torch.Tensor] = {}
        if self.weights is not None:
            blocks[self.weights] = torch.stack([x[s] for s in self.coefficients], dim=-1)
        if self.offset is not None:
            like = next(iter(x.values()))
            blocks[self.offset] = torch.ones(self.shape, dtype=like.dtype).to(like.device)
        return {self.target: blocks}

    def jacobian_batched(self, of: str, wrt: str) -> bool:
        return False

    def param_jacobian_batched(self, of: str, param: str) -> bool:
        return param != self.offset


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
