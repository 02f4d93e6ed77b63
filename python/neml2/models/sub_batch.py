"""Sub-batch axes: per-point axes between the batch axis and a variable's base shape.

A variable may carry axes of its own after the batch axis, for example one value per
slip system or per cell: ``(B, *sub_batch, *base)``. Its :class:`Variable` then has
``shape = (*sub_batch, *base)``, the shape of one material point, and ``sub_batch`` names
the leading part, so every derivative block, the compiled graphs and the C++ runtime
treat it as any other per-point shape, and only the batch axis is ever sliced.

The sizes are declared in the input file as NEML2 declares them, in
``[Settings]/[example_batch_shape]``: ``name = '(2; 12)'`` gives ``name`` (and ``name~1``)
one sub-batch axis of 12 (the part before ``;`` is NEML2's trace hint for the batch axis
and is not needed here). Declared inputs propagate through a model: a model that works
point by point maps sub-batched inputs to outputs with the same sub-batch axes
(:class:`SubBatched`), and the reductions of :mod:`.reduction` remove or shorten one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

import torch

from ..hit import Section
from .base import Evaluation, Model, Status, Variable, model_section
from .base.wrapper import Wrapper
from .registry import build_model

Shape = tuple[int, ...]

_SPEC = re.compile(r"\(\s*([^;()]*?)\s*(?:;\s*([^;()]*?)\s*)?\)")


def parse_batch_shape(section: Section, key: str) -> Shape:
    """The sub-batch part of NEML2's ``'(dynamic; sub-batch)'`` shape spec (``()`` when
    the spec has no ``;``)."""
    text = section.string(key).strip()
    match = _SPEC.fullmatch(text)
    if match is None:
        raise section.error(
            key,
            f"parameter '{key}': expected a shape such as '(2,)' or '(2; 12)' "
            f"(batch; sub-batch), got '{text}'",
        )
    sizes: list[int] = []
    for item in filter(None, (s.strip() for s in (match.group(2) or "").split(","))):
        if not item.isdigit() or int(item) < 1:
            raise section.error(
                key, f"parameter '{key}': sub-batch sizes must be positive integers, got '{item}'"
            )
        sizes.append(int(item))
    return tuple(sizes)


def declared_sub_batch(root: Section) -> dict[str, Shape]:
    """Variable name -> sub-batch shape, from ``[Settings]/[example_batch_shape]``; a name
    ``x`` also declares ``x~1`` and the other way round."""
    settings = root.child("Settings")
    if settings is None:
        return {}
    declared: dict[str, Shape] = {}
    block = settings.child("example_batch_shape")
    if block is not None:
        for key in block.params:
            declared[key] = parse_batch_shape(block, key)
    if "example_batch_shape" in settings.params:
        declared["*"] = parse_batch_shape(settings, "example_batch_shape")
    return declared


def lookup(declared: Mapping[str, Shape], name: str) -> Shape | None:
    """The declared sub-batch shape of ``name`` (or of its lag family ``x``/``x~1``)."""
    base = name.split("~", 1)[0]
    for key in (name, base):
        if key in declared:
            return declared[key]
    for key, shape in declared.items():
        if key.split("~", 1)[0] == base and key != "*":
            return shape
    return declared.get("*")


def build_with_settings(
    root: Section, name: str, sub_batch: Mapping[str, Shape] | None = None
) -> Model:
    """The model ``[Models/<name>]`` with the sub-batch axes its file declares;
    ``sub_batch`` (variable name -> axes) adds to and overrides the file's."""
    section = model_section(root, name)
    model = build_model(section)
    declared = {**declared_sub_batch(root), **(sub_batch or {})}
    subs: dict[str, Shape] = {}
    for var in model.inputs:
        shape = lookup(declared, var.name)
        if shape:
            subs[var.name] = shape
    try:
        return model.with_sub_batch(subs)
    except ValueError as err:
        raise section.error(None, f"[{section.full_name}]: {err}") from None


def sub_batched(var: Variable, sub: Shape) -> Variable:
    """``var`` with sub-batch axes ``sub`` in front of its base shape."""
    return Variable(var.name, (*sub, *var.base), sub)


class SubBatched(Wrapper):
    """A point-by-point model evaluated on sub-batched inputs.

    Every sub-batch entry is one more point of the wrapped model: the inputs are folded
    to ``(B * S, *base)`` (an input without the sub-batch axes is repeated along them),
    the wrapped model runs once, and the results unfold to ``(B, *sub_batch, ...)``. The
    derivative of an output entry with respect to a sub-batched input is zero off the
    diagonal of the sub-batch axes, so a block ``(B, *sub, *of, *sub, *wrt)`` is built
    from the wrapped model's ``(B * S, *of, *wrt)``.
    """

    def __init__(self, inner: Model, sub: Shape, sub_inputs: frozenset[str]) -> None:
        self.sub = sub
        self.sub_inputs = sub_inputs
        inputs = [sub_batched(v, sub) if v.name in sub_inputs else v for v in inner.inputs]
        outputs = [sub_batched(v, sub) for v in inner.outputs]
        super().__init__(inner, inputs, outputs)

    def with_sub_batch(self, subs: Mapping[str, Shape]) -> Model:
        """The wrapped model with the axes ``subs`` (replacing, not adding to, its own)."""
        return self.inner.with_sub_batch(subs)

    def evaluate(
        self,
        x: Mapping[str, torch.Tensor],
        p: Mapping[str, torch.Tensor],
        jacobian: bool = False,
        param_jacobian: bool = False,
    ) -> Evaluation:
        count = math.prod(self.sub)
        n = next(iter(x.values())).shape[0]
        folded: dict[str, torch.Tensor] = {}
        for var in self.inner.inputs:
            value = x[var.name]
            if var.name not in self.sub_inputs:
                value = value.unsqueeze(1).expand((n, count, *var.shape))
            folded[var.name] = value.reshape((n * count, *var.shape))
        ev = self.inner.evaluate(folded, p, jacobian, param_jacobian)
        out = Evaluation({k: self._unfold(v, n) for k, v in ev.outputs.items()})
        if ev.status is not None:
            out.status = Status(
                ev.status.converged.reshape(n, count).all(-1),
                ev.status.residual.reshape(n, count).amax(-1),
            )
        if jacobian:
            out.jacobian = {
                of.name: {
                    wrt.name: self._block(ev.jacobian[of.name][wrt.name], of, wrt, n)
                    for wrt in self.inner.inputs
                }
                for of in self.inner.outputs
            }
        if param_jacobian:
            out.param_jacobian = {
                of.name: {
                    q: self._param_block(ev.param_jacobian[of.name][q], of, q, p, n)
                    for q in self.parameters
                }
                for of in self.inner.outputs
            }
        return out

    def _unfold(self, value: torch.Tensor, n: int) -> torch.Tensor:
        return value.reshape((n, *self.sub, *value.shape[1:]))

    def _per_point(self, block: torch.Tensor, shape: Shape, batched: bool, n: int) -> torch.Tensor:
        """A wrapped block as ``(B * S, *shape)``, repeating a point-independent one."""
        if batched:
            return block
        return block.unsqueeze(0).expand((n * math.prod(self.sub), *shape))

    def _block(self, block: torch.Tensor, of: Variable, wrt: Variable, n: int) -> torch.Tensor:
        count = math.prod(self.sub)
        batched = self.inner.jacobian_batched(of.name, wrt.name)
        block = self._per_point(block, (*of.shape, *wrt.shape), batched, n)
        if wrt.name not in self.sub_inputs:
            return block.reshape((n, *self.sub, *of.shape, *wrt.shape))
        flat = block.reshape(n, count, of.size, 1, wrt.size)
        eye = torch.eye(count, dtype=block.dtype).to(block.device).reshape(1, count, 1, count, 1)
        full = flat * eye
        return full.reshape((n, *self.sub, *of.shape, *self.sub, *wrt.shape))

    def _param_block(
        self, block: torch.Tensor, of: Variable, q: str, p: Mapping[str, torch.Tensor], n: int
    ) -> torch.Tensor:
        shape = (*of.shape, *p[q].shape)
        block = self._per_point(block, shape, self.inner.param_jacobian_batched(of.name, q), n)
        return block.reshape((n, *self.sub, *shape))


def point_by_point(model: Model, subs: Mapping[str, Shape]) -> Model:
    """``model`` evaluated point by point over the sub-batch axes of its inputs ``subs``."""
    given = {name: shape for name, shape in subs.items() if shape}
    if not given:
        return model
    shapes = sorted(set(given.values()))
    if len(shapes) > 1:
        listed = ", ".join(f"'{n}' {s}" for n, s in given.items())
        raise ValueError(
            f"{model.type_name} '{model.name}' takes inputs with different sub-batch axes "
            f"({listed}); a point-by-point model needs one sub-batch shape"
        )
    return SubBatched(model, shapes[0], frozenset(given))
