"""Tensors a model forms from its options rather than from its inputs or parameters (a
crystal's Schmid tensors), and how a compiled graph holds them.

Evaluated eagerly, a model makes such a tensor on the device of its inputs. A compiled graph
must hold it as a constant of its own device. Made from numbers inside the trace, or copied
over from the CPU inside it, Inductor (torch 2.11) mishandles it on a GPU: it refuses a fresh
tensor under its functionalization ("Attempting to use FunctionalTensor on its own"), or folds
the copy into a device constant that CPU kernels then read. So the graph module
(:class:`neml2.compile.export.Graph`) collects the constants from one eager evaluation
(:func:`collecting`), registers them as buffers, which export lifts as constants of the graph's
device like the baked parameters, and hands them back while it is traced
(:func:`given_constants`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import torch

# Module globals rather than context variables: the solves trace their loop bodies with
# Dynamo, which reads a global but not a ContextVar.
#: Key -> the tensor a graph being traced holds for it (see given_constants).
_given: dict[str, torch.Tensor] | None = None
#: Key -> the tensor made, while an evaluation is collecting them (see collecting).
_seen: dict[str, torch.Tensor] | None = None


def constant(key: str, values: Sequence[Any], like: torch.Tensor) -> torch.Tensor:
    """The constant ``key`` (unique in the model: prefixed by the model's name) with the
    nested ``values``, with the dtype and on the device of ``like``: the graph's own while a
    graph is traced, else made now."""
    if _given is not None and key in _given:
        return _given[key]
    made = torch.tensor(values, dtype=like.dtype, device=like.device)
    if _seen is not None:
        _seen[key] = made
    return made


@contextlib.contextmanager
def collecting() -> Iterator[dict[str, torch.Tensor]]:
    """Within the block, every constant made is recorded in the dict yielded, by key."""
    global _seen
    before, _seen = _seen, {}
    try:
        yield _seen
    finally:
        _seen = before


@contextlib.contextmanager
def given_constants(values: Mapping[str, torch.Tensor]) -> Iterator[None]:
    """Within the block, the constants named in ``values`` are those tensors (the buffers of
    a graph being traced) instead of tensors made from numbers."""
    global _given
    before, _given = _given, dict(values)
    try:
        yield
    finally:
        _given = before
