"""The initial guess of an implicit update: ``ConstantExtrapolationPredictor`` (each unknown
starts from its value at the start of the step), the check of what a predictor predicts
(:func:`check_predictor`), and the sub-batch axes of a residual model and its predictor
(:func:`_with_axes`). :class:`~.implicit.ImplicitUpdate` uses them."""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch

from ..hit import Section
from .base import Blocks, Leaf, Model, Tensors, Variable
from .registry import register

Shape = tuple[int, ...]


@register
class ConstantExtrapolationPredictor(Leaf):
    """The initial guess of each unknown listed: its value at the start of the step, ``u~1``."""

    type_name = "ConstantExtrapolationPredictor"
    options = frozenset({"unknowns_SR2", "unknowns_Scalar", "unknowns_MRP", "unknowns_R2"})

    def __init__(
        self,
        name: str,
        unknowns: Mapping[str, tuple[int, ...]],
        subs: Mapping[str, Shape] | None = None,
    ) -> None:
        #: unknown -> its shape per point, sub-batch axes first
        self.unknowns = dict(unknowns)
        subs = subs or {}
        super().__init__(
            name,
            [Variable(f"{u}~1", s, tuple(subs.get(u, ()))) for u, s in unknowns.items()],
            [Variable(u, s, tuple(subs.get(u, ()))) for u, s in unknowns.items()],
            {},
        )

    def with_sub_batch(self, subs: Mapping[str, Shape]) -> Model:
        """Each unknown with the sub-batch axes of its ``u~1`` (one guess per entry)."""
        axes = {u: tuple(subs.get(f"{u}~1", ())) for u in self.unknowns}
        if not any(axes.values()):
            return self
        base = {u: v.base for u, v in zip(self.unknowns, self.outputs, strict=True)}
        shapes = {u: (*axes[u], *base[u]) for u in self.unknowns}
        return ConstantExtrapolationPredictor(self.name, shapes, axes)

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        unknowns: dict[str, tuple[int, ...]] = {}
        kinds = (
            ("unknowns_SR2", (6,)),
            ("unknowns_Scalar", ()),
            ("unknowns_MRP", (3,)),
            ("unknowns_R2", (3, 3)),
        )
        for key, shape in kinds:
            for u in section.strings(key, []):
                unknowns[u] = shape
        if not unknowns:
            raise section.error(
                None,
                f"[{section.full_name}]: expected unknowns_SR2, unknowns_Scalar, unknowns_MRP "
                "or unknowns_R2",
            )
        return cls(section.name, unknowns)

    def kernel(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        out = {u: x[f"{u}~1"] for u in self.unknowns}
        jac: Blocks = {}
        for u, shape in self.unknowns.items():
            like = x[f"{u}~1"]
            size = math.prod(shape)
            eye = torch.eye(size, dtype=like.dtype).to(like.device).reshape((*shape, *shape))
            jac[u] = {f"{u}~1": eye.unsqueeze(0).expand((like.shape[0], *eye.shape)).clone()}
        return out, jac, {}


def _with_axes(
    system: Model, predictor: Model | None, subs: Mapping[str, Shape]
) -> tuple[Model, Model | None]:
    """``system`` and ``predictor`` with the sub-batch axes of the lag families in ``subs``."""
    family = {name.split("~", 1)[0]: tuple(shape) for name, shape in subs.items() if shape}

    def axes(model: Model) -> dict[str, Shape]:
        return {
            v.name: family[v.name.split("~", 1)[0]]
            for v in model.inputs
            if v.name.split("~", 1)[0] in family
        }

    if not family:
        return system, predictor
    system = system.with_sub_batch(axes(system))
    if predictor is not None:
        predictor = predictor.with_sub_batch(axes(predictor))
    return system, predictor


def check_predictor(predictor: Model, unknowns: list[Variable], base: bool = False) -> list[str]:
    """The unknowns ``predictor`` predicts; ValueError where it predicts something else, an
    unknown of another shape (``base``: compare base shapes only, before sub-batch axes
    are known) or reads an unknown itself, or is implicit."""
    if predictor.implicit:
        raise ValueError(f"predictor '{predictor.name}' is itself implicit; not supported")
    by_name = {v.name: v for v in unknowns}
    names = ", ".join(by_name)
    for out in predictor.outputs:
        if out.name not in by_name:
            raise ValueError(
                f"predictor '{predictor.name}' predicts '{out.name}', which is not an "
                f"unknown; unknowns: {names}"
            )
        want = by_name[out.name]
        got, expected = (out.base, want.base) if base else (out.shape, want.shape)
        if got != expected:
            raise ValueError(
                f"predictor '{predictor.name}' predicts '{out.name}' of shape {got}, "
                f"but the unknown has shape {expected}"
            )
    for v in predictor.inputs:
        if v.name in by_name:
            raise ValueError(
                f"predictor '{predictor.name}' reads '{v.name}', an unknown of the system; "
                "a predictor reads only inputs of the update"
            )
    return [v.name for v in unknowns if v.name in {o.name for o in predictor.outputs}]
