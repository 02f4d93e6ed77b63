"""The checks that need a loaded graph (``Model.h``): its call spec against the meta
(:func:`check_call_spec`) and the returns of one call on one point
(:func:`probe_args` builds the call, :func:`check_returns` checks what it returned)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from ..errors import ArtifactError
from .common import (
    META_DTYPES,
    MISMATCH,
    Meta,
    arg_shape,
    dtype_name,
    setting_spec,
    setting_tensor,
    shape_str,
)


def spec_leaves(spec: str) -> int | None:
    """The number of tensors in one part of a graph's call spec (the leaves of its pytree
    spec); None when the spec is in a form this reader does not know."""
    try:
        root = json.loads(spec)
    except ValueError:
        return None
    if not isinstance(root, list) or len(root) != 2:
        return None
    leaves = 0
    stack: list[tuple[Any, int]] = [(root[1], 0)]
    while stack:
        node, depth = stack.pop()
        if depth > 64 or not isinstance(node, dict):
            return None
        children = node.get("children_spec")
        if "type" not in node or not isinstance(children, list):
            return None
        leaves += node["type"] is None
        stack.extend((c, depth + 1) for c in children)
    return leaves


def check_call_spec(context: str, graph: str, path: Path, loaded: Any, spec: Meta) -> None:
    """Compare the number of arguments and returns of a loaded package with the meta's."""
    try:
        parts = list(loaded.loader.get_call_spec())
    except Exception:
        return  # no call spec: nothing to compare
    for part, what, declared in ((0, "takes", "args"), (1, "returns", "returns")):
        count = spec_leaves(parts[part]) if part < len(parts) else None
        if count is not None and count != len(spec[declared]):
            noun = "inputs" if part == 0 else "tensors"
            raise ArtifactError(
                f"{context}: graph '{graph}' in '{path}' {what} {count} {noun}, "
                f"model_meta.json declares {len(spec[declared])}: " + MISMATCH
            )


def return_shape(meta: Meta, slot: dict[str, Any], rows: int) -> list[int]:
    """The shape model_meta.json gives a return of a call on ``rows`` points."""

    def base(table: str, name: str) -> list[int]:
        return next((list(v["shape"]) for v in meta[table] if v["name"] == name), [])

    role = slot["role"]
    if role in ("converged", "residual"):
        return [rows]
    if role == "adjoint":
        shape = base("parameters", slot["name"])
        return [rows, *shape] if slot.get("per_point") is True else shape
    if role != "derivative":
        return [rows, *base("outputs", slot["name"])]
    of, wrt = slot["of"], slot["wrt"]
    is_input = any(v["name"] == wrt for v in meta["inputs"])
    shape = base("outputs", of) + base("inputs" if is_input else "parameters", wrt)
    pairs = meta.get("derivatives" if is_input else "param_derivatives", [])
    batched = next((d["batched"] for d in pairs if d["of"] == of and d["wrt"] == wrt), True)
    if "batched" in slot:  # a per-point variant says it of each derivative
        batched = slot["batched"]
    return [rows, *shape] if batched else shape


def check_returns(
    model: str,
    graph: str,
    meta: Meta,
    returns: Sequence[Any],
    rows: int,
    device: torch.device,
    spec: Meta | None = None,
) -> None:
    """Refuse returns whose number, shape, dtype or device disagree with model_meta.json;
    ``spec`` is the entry of ``graph`` when it is not ``meta["graphs"][graph]`` (a per-point
    variant, whose messages name it ``<graph>_per_point``)."""
    slots = (spec if spec is not None else meta["graphs"][graph])["returns"]
    if len(returns) != len(slots):
        raise ArtifactError(
            f"model '{model}': graph '{graph}' returned {len(returns)} tensors, "
            f"model_meta.json declares {len(slots)}"
        )
    dtype = META_DTYPES[meta["dtype"]]
    for i, (slot, r) in enumerate(zip(slots, returns, strict=True)):
        want = return_shape(meta, slot, rows)
        ok = (
            isinstance(r, torch.Tensor)
            and r.device.type == device.type
            and (slot["role"] == "converged" or r.dtype == dtype)
            and list(r.shape) == want
        )
        if ok:
            continue
        label = f"{slot['of']}:{slot['wrt']}" if slot["role"] == "derivative" else slot["name"]
        found = (
            f"{shape_str(list(r.shape))} {dtype_name(r.dtype)} on {r.device}"
            if isinstance(r, torch.Tensor)
            else "not a tensor"
        )
        raise ArtifactError(
            f"model '{model}': graph '{graph}' return {i} ('{label}') is {found}, "
            f"model_meta.json declares {shape_str(want)} {dtype_name(dtype)} on {device}: "
            + MISMATCH
        )


def probe_args(
    meta: Meta,
    graph: str,
    parameters: dict[str, torch.Tensor],
    device: torch.device,
    settings: dict[str, torch.Tensor] | None = None,
    spec: Meta | None = None,
) -> list[torch.Tensor]:
    """One point of zeros per batched argument, parameters as they are (one point of a
    parameter a per-point variant takes per point), settings as given (by default the
    meta's values): the loader's probe. ``spec``: the graph's entry, when it is not
    ``meta["graphs"][graph]`` (a per-point variant).

    Each batched argument is the start of a zero buffer far larger than the meta says, so
    that a graph that reads more than the meta declares reads zeros, not foreign memory.
    """
    dtype = META_DTYPES[meta["dtype"]]
    args = []
    for slot in (spec if spec is not None else meta["graphs"][graph])["args"]:
        if slot["role"] == "parameter":
            value = parameters[slot["name"]]
            if slot.get("per_point") is True:  # one point: (1, *shape)
                per_point = value.dim() == len(arg_shape(meta, slot))
                value = value[:1] if per_point else value.unsqueeze(0).contiguous()
            args.append(value)
            continue
        if slot["role"] == "setting":
            given = (settings or {}).get(slot["name"])
            spec = setting_spec(meta, slot["name"])
            args.append(given if given is not None else setting_tensor(spec, device))
            continue
        shape = [1, *(int(n) for n in arg_shape(meta, slot)[1:])]
        numel = math.prod(shape)
        buffer = torch.zeros(16 * numel + 4096, dtype=torch.float64, device=device)
        args.append(buffer.view(dtype)[:numel].view(shape))
    return args
