"""Conversions between NEML2 tensor types: R2ToSR2, SR2ToR2, R2ToWR2,
ScalarToDiagonalSR2, VecComponents and RotationMatrix.

The linear conversions take their (constant) derivative blocks from
:func:`~neml2.tensors.linear_block` applied to the conversion itself, so the storage
conventions of :mod:`neml2.tensors` are written down once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar

import torch

from ..hit import Section
from ..tensors import (
    base_shape,
    full_to_sr2,
    full_to_wr2,
    linear_block,
    mrp_to_matrix,
    mrp_to_matrix_derivative,
    per_point,
    sr2_to_full,
)
from .base import Blocks, Leaf, Model, Tensors, Variable, variable_name
from .block import SCALAR, Block
from .registry import register

R2 = base_shape("R2")
SR2 = base_shape("SR2")
VEC = base_shape("Vec")


def _diagonal_sr2(s: torch.Tensor) -> torch.Tensor:
    """``s I`` as a Mandel 6-vector, ``(..., 6)``, for scalars ``(...)``."""
    zero = torch.zeros_like(s)
    return torch.stack([s, s, s, zero, zero, zero], -1)


class _LinearConversion(Block):
    """``output = convert(input)`` for a linear ``convert``; d output / d input is the
    constant block of ``convert``."""

    in_shape: ClassVar[tuple[int, ...]]
    out_shape: ClassVar[tuple[int, ...]]
    convert: ClassVar[Callable[[torch.Tensor], torch.Tensor]]

    def __init_subclass__(cls, **kwargs: object) -> None:
        cls.inputs_spec = (("input", "input", cls.in_shape),)
        cls.outputs_spec = (("output", "output", cls.out_shape),)
        super().__init_subclass__(**kwargs)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        a = x["input"]
        convert = type(self).convert
        out = {"output": convert(a)}
        if not derivatives:
            return out, {}, {}
        block = per_point(linear_block(convert, self.in_shape, a), a.shape[0])
        return out, {"output": {"input": block}}, {}


@register
class R2ToSR2(_LinearConversion):
    """``output = sym(input)``: the symmetric part of a full second-order tensor, Mandel."""

    type_name = "R2ToSR2"
    in_shape, out_shape = R2, SR2
    convert = staticmethod(full_to_sr2)


@register
class SR2ToR2(_LinearConversion):
    """``output``: the full matrix of a symmetric second-order tensor (Mandel)."""

    type_name = "SR2ToR2"
    in_shape, out_shape = SR2, R2
    convert = staticmethod(sr2_to_full)


@register
class R2ToWR2(_LinearConversion):
    """``output = skew(input)``: the axial vector of the skew part of a full tensor."""

    type_name = "R2ToWR2"
    in_shape, out_shape = R2, VEC
    convert = staticmethod(full_to_wr2)


@register
class ScalarToDiagonalSR2(_LinearConversion):
    """``output = input I``, a diagonal symmetric tensor (Mandel)."""

    type_name = "ScalarToDiagonalSR2"
    in_shape, out_shape = SCALAR, SR2
    convert = staticmethod(_diagonal_sr2)


@register
class VecComponents(Leaf):
    """``to`` (three variable names, required) = the components 0, 1, 2 of ``from``."""

    type_name = "VecComponents"
    options = frozenset({"from", "to"})

    def __init__(self, name: str, source: str, targets: Sequence[str]) -> None:
        self.source = source
        self.targets = list(targets)
        super().__init__(
            name, [Variable(source, VEC)], [Variable(t, SCALAR) for t in self.targets], {}
        )

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        source = variable_name(section, "from", "from")
        targets = section.strings("to")
        if len(targets) != 3:
            raise section.error(
                "to",
                f"parameter 'to': expected 3 variable names (components 0, 1, 2), "
                f"got {len(targets)}",
            )
        for index, target in enumerate(targets):
            if target in targets[:index] or target == source:
                raise section.error("to", f"parameter 'to': variable name '{target}' is used twice")
        return cls(section.name, source, targets)

    def kernel(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        v = x[self.source]
        out = {t: v[..., i] for i, t in enumerate(self.targets)}
        if not derivatives:
            return out, {}, {}
        rows = per_point(linear_block(lambda u: u, VEC, v), v.shape[0])
        return out, {t: {self.source: rows[:, i]} for i, t in enumerate(self.targets)}, {}


@register
class RotationMatrix(Block):
    """``to``: the rotation matrix (R2) of the orientation ``from`` (MRP)."""

    type_name = "RotationMatrix"
    inputs_spec = (("from", "from", VEC),)
    outputs_spec = (("to", "to", R2),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        r = x["from"]
        out = {"to": mrp_to_matrix(r)}
        if not derivatives:
            return out, {}, {}
        return out, {"to": {"from": mrp_to_matrix_derivative(r)}}, {}
