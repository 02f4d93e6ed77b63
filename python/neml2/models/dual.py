"""Forward-mode dual numbers over scalar tensors, for exact parameter derivatives.

Models whose stored parameters are converted by closed-form algebra (e.g. Young's
modulus and Poisson's ratio to Lame constants) write the conversion once with
:class:`Dual` values and get the conversion's derivatives from the same expressions.
Every operation is a plain tensor operation, so it traces into exported graphs.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

Scalar = torch.Tensor | float


class Dual:
    """A value together with its partial derivatives with respect to n seed variables."""

    __slots__ = ("grad", "value")

    def __init__(self, value: Scalar, grad: Sequence[Scalar]) -> None:
        self.value = value
        self.grad = tuple(grad)

    @staticmethod
    def seeds(values: Sequence[torch.Tensor]) -> list[Dual]:
        """The independent variables: value i has derivative 1 along i and 0 elsewhere."""
        n = len(values)
        return [Dual(v, [1.0 if j == i else 0.0 for j in range(n)]) for i, v in enumerate(values)]

    def _lift(self, other: Dual | Scalar) -> Dual:
        if isinstance(other, Dual):
            return other
        return Dual(other, [0.0] * len(self.grad))

    def __add__(self, other: Dual | Scalar) -> Dual:
        o = self._lift(other)
        return Dual(self.value + o.value, [a + b for a, b in zip(self.grad, o.grad, strict=True)])

    __radd__ = __add__

    def __neg__(self) -> Dual:
        return Dual(-self.value, [-a for a in self.grad])

    def __sub__(self, other: Dual | Scalar) -> Dual:
        return self + (-self._lift(other))

    def __rsub__(self, other: Dual | Scalar) -> Dual:
        return self._lift(other) - self

    def __mul__(self, other: Dual | Scalar) -> Dual:
        o = self._lift(other)
        return Dual(
            self.value * o.value,
            [a * o.value + self.value * b for a, b in zip(self.grad, o.grad, strict=True)],
        )

    __rmul__ = __mul__

    def __truediv__(self, other: Dual | Scalar) -> Dual:
        o = self._lift(other)
        quotient = self.value / o.value
        return Dual(
            quotient, [(a - quotient * b) / o.value for a, b in zip(self.grad, o.grad, strict=True)]
        )

    def __rtruediv__(self, other: Dual | Scalar) -> Dual:
        return self._lift(other) / self

    def sqrt(self) -> Dual:
        root = torch.sqrt(torch.as_tensor(self.value))
        return Dual(root, [a / (2.0 * root) for a in self.grad])
