"""What the artifact checks share: the graphs and argument roles a meta names, the
dtypes and size limits it allows, the advice every mismatch ends with, how the C++
messages write dtypes and shapes, and the declared dtype and shape of a graph argument."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

#: The graphs a model may carry, as in artifact.GRAPHS (repeated here to avoid a cycle).
GRAPHS = ("forward", "jvp", "jacobian", "param_jacobian", "param_vjp")


#: The suffix of an in-place variant's file name (``forward_into.pt2``).
INTO_SUFFIX = "_into"


#: The suffix of a per-point variant's file name (``forward_per_point.pt2``).
PER_POINT_SUFFIX = "_per_point"


ROLES = (
    "input",
    "parameter",
    "setting",
    "tangent",
    "cotangent",
    "output",
    "derivative",
    "adjoint",
    "converged",
    "residual",
)


#: Argument roles that carry the batch axis in front of the variable's shape (and the
#: parameters a per-point variant marks ``"per_point": true``).
BATCHED_ARGS = ("input", "tangent", "cotangent")


#: The advice every mismatch between graph files and meta ends with (C++ wording).
MISMATCH = (
    "the graph files and model_meta.json do not match; recompile the model with neml2-compile"
)


#: The C++ (c10) names of the dtypes a graph returns, for messages.
DTYPE_NAMES = {torch.float64: "Double", torch.float32: "Float", torch.bool: "Bool"}


#: model_meta.json's dtype spellings.
META_DTYPES = {"float64": torch.float64, "float32": torch.float32}


#: The largest size of one axis, and of one variable, that the C++ reader accepts.
MAX_SIZE = 1 << 31


#: The dtype of a ``max_its`` setting (the tolerances have the meta's dtype).
COUNT_DTYPE = "int64"


Meta = dict[str, Any]


def dtype_name(dtype: torch.dtype) -> str:
    """``Double`` for ``torch.float64``: how the C++ messages name a dtype."""
    return DTYPE_NAMES.get(dtype, str(dtype).removeprefix("torch."))


def shape_str(shape: Sequence[int | str]) -> str:
    """``(6,)``, ``(1, 6)``, ``()``: a shape as the C++ messages write it."""
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def setting_spec(meta: Meta, name: str) -> dict[str, Any]:
    """The entry of the meta's ``settings`` called ``name``."""
    spec: dict[str, Any] = next(s for s in meta.get("settings", []) if s["name"] == name)
    return spec


def arg_dtype(meta: Meta, slot: dict[str, Any]) -> str:
    """The dtype model_meta.json gives argument ``slot`` (a setting's own, else the meta's)."""
    if slot["role"] == "setting":
        dtype: str = setting_spec(meta, slot["name"])["dtype"]
        return dtype
    dtype = meta["dtype"]
    return dtype


def setting_tensor(spec: dict[str, Any], device: torch.device) -> torch.Tensor:
    """The 0-dim tensor of one entry of the meta's ``settings`` (its value and dtype)."""
    dtype = torch.int64 if spec["dtype"] == COUNT_DTYPE else META_DTYPES[spec["dtype"]]
    return torch.tensor(spec["value"], dtype=dtype, device=device)


def arg_shape(meta: Meta, slot: dict[str, Any]) -> list[int | str]:
    """The shape model_meta.json gives argument ``slot``: ``B`` first when batched."""
    if slot["role"] == "setting":
        return []
    table = {"parameter": "parameters", "cotangent": "outputs"}.get(slot["role"], "inputs")
    shape: list[int | str] = next(
        list(v["shape"]) for v in meta[table] if v["name"] == slot["name"]
    )
    batched = slot["role"] in BATCHED_ARGS or slot.get("per_point") is True
    return ["B", *shape] if batched else shape
