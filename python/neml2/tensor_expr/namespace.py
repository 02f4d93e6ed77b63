"""What a tensor expression sees and may name: the read-only ``torch`` and ``math``
stand-ins, the builtins it may call, the names and attributes it may not use, and
:func:`base_namespace`."""

from __future__ import annotations

import builtins
import math
import sys
from collections.abc import Mapping
from typing import Any

import torch

from .functions import _FREE_FUNCTIONS
from .tensor_types import EXPR_TYPES
from .typed import Region


def _words(text: str) -> tuple[str, ...]:
    """The whitespace-separated words of ``text``."""
    return tuple(text.split())


class _Module:
    """A read-only stand-in for a module that holds only the listed members."""

    __slots__ = ("_label", "_members")

    def __init__(self, label: str, members: Mapping[str, Any]) -> None:
        object.__setattr__(self, "_label", label)
        object.__setattr__(self, "_members", dict(members))

    def __getattr__(self, name: str) -> Any:
        members = object.__getattribute__(self, "_members")
        if name in members:
            return members[name]
        label = object.__getattribute__(self, "_label")
        raise AttributeError(
            f"{label}.{name} is not available in tensor expressions; "
            f"{label} has: {', '.join(sorted(members))}"
        )

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("the namespace is read-only")

    def __dir__(self) -> list[str]:
        return sorted(object.__getattribute__(self, "_members"))


#: torch's tensor-creation, math and shape functions an expression may call.
TORCH_FUNCTIONS = _words(
    """
    tensor as_tensor zeros ones full eye empty arange linspace logspace zeros_like
    ones_like full_like diag diag_embed diagonal stack cat hstack vstack meshgrid
    cartesian_prod reshape flatten squeeze unsqueeze transpose permute movedim flip roll
    repeat_interleave tile broadcast_to expand_copy exp expm1 log log1p log2 log10 sqrt
    rsqrt square pow sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh
    abs sign sgn floor ceil round trunc frac clamp clip maximum minimum max min sum prod
    mean std var cumsum cumprod diff where relu sigmoid heaviside erf erfc matmul mm bmm
    mv outer einsum dot inner tensordot kron cross trace tril triu isclose allclose
    isfinite isnan deg2rad rad2deg hypot lerp
    """
)
#: torch's non-function members an expression may name.
TORCH_CONSTANTS = ("pi", "e", "inf", "nan", "float64", "float32", "double", "float", "int64")
#: the tensor methods and attributes an expression may use (beside the typed tensors' own).
TENSOR_ATTRIBUTES = frozenset(
    _words(
        """
        shape ndim dim size numel T mT item tolist reshape view flatten squeeze unsqueeze
        transpose permute expand expand_as repeat clone contiguous double float to sum prod
        mean std var min max cumsum cumprod abs sqrt exp log log10 pow sin cos tan sinh cosh
        tanh sign clamp clip diagonal diag t flip roll matmul dot outer cross norm neg
        reciprocal square round floor ceil unbind split chunk narrow select index_select
        real imag dtype
        """
    )
)
#: math's members an expression may use.
MATH_MEMBERS = _words(
    """
    pi e tau inf nan sqrt exp expm1 log log1p log2 log10 pow sin cos tan asin acos atan
    atan2 sinh cosh tanh asinh acosh atanh hypot degrees radians floor ceil trunc fabs
    factorial comb perm gcd lcm isclose isfinite isnan prod fsum copysign erf erfc gamma
    lgamma
    """
)

TORCH = _Module(
    "torch",
    {n: getattr(torch, n) for n in (*TORCH_FUNCTIONS, *TORCH_CONSTANTS) if hasattr(torch, n)},
)
MATH = _Module("math", {n: getattr(math, n) for n in MATH_MEMBERS if hasattr(math, n)})

#: The builtins an expression may call.
SAFE_BUILTINS: dict[str, Any] = {
    n: getattr(builtins, n)
    for n in _words("abs min max range len float int list tuple sum zip enumerate round")
} | {"True": True, "False": False, "None": None}


def _torch_internal_import(name: str, *args: Any, **kwargs: Any) -> Any:
    """The ``__import__`` of an expression's frame, for torch's own use only.

    torch's C functions (``torch.tensor``, ``torch.linspace``, ...) import modules of
    their own through the builtins of the calling frame; an expression itself can never
    name ``__import__`` (a dunder name, refused before evaluation), and this one imports
    nothing but modules that are already loaded.
    """
    if name not in sys.modules:
        raise ImportError(f"expressions import nothing ('{name}')")
    return builtins.__import__(name, *args, **kwargs)


#: Builtins and names that reach outside: refused wherever they appear.
FORBIDDEN_NAMES = frozenset(
    _words(
        """
        open eval exec compile getattr setattr delattr hasattr globals locals vars dir
        __import__ __builtins__ breakpoint input help type object super memoryview
        classmethod staticmethod property exit quit print id hash iter next callable
        isinstance issubclass format repr ascii chr ord bytes bytearray
        """
    )
)


def _typed_attributes() -> frozenset[str]:
    names: set[str] = set()
    for cls in (*EXPR_TYPES.values(), Region):
        names.update(n for n in dir(cls) if not n.startswith("_"))
    return frozenset(names - {"tensor", "kind"})


#: Every attribute name an expression may use.
ALLOWED_ATTRIBUTES = (
    TENSOR_ATTRIBUTES
    | _typed_attributes()
    | frozenset(TORCH_FUNCTIONS)
    | frozenset(TORCH_CONSTANTS)
    | frozenset(MATH_MEMBERS)
)


def base_namespace() -> dict[str, Any]:
    """The names every expression sees (before the file's own [Tensors] blocks)."""
    names: dict[str, Any] = {"torch": TORCH, "math": MATH}
    names.update({n: cls for n, cls in EXPR_TYPES.items()})
    names.update(_FREE_FUNCTIONS)
    return names
