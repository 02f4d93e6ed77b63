"""The restricted Python of ``[Tensors]`` blocks of ``type = Python``.

An expression (or a block of statements that assigns ``result``) is parsed, its syntax
tree is checked against what tensor construction needs, and only then is it evaluated,
with empty builtins apart from a few harmless ones, in a namespace that holds:

* small typed tensors under NEML2's names (:class:`Scalar`, :class:`SR2`, :class:`Vec`,
  :class:`R2`, :class:`WR2`, :class:`SSR4`, :class:`MRP`, :class:`Quaternion`,
  :class:`MillerIndex`) with the constructors and class methods NEML2's input files use,
  their region views (``x.dynamic_batch``, ``x.sub_batch``, ...) and the free functions
  ``linspace``, ``logspace``, ``stack``, ``cat`` and a few elementwise and algebraic ones;
* ``torch`` and ``math`` as stand-ins that hold only a list of tensor-creation and math
  functions (no ``torch.load``, ``torch.save``, ``torch.ops``, ``torch.hub``, ...);
* the other ``[Tensors]`` blocks of the file, by bare name (supplied by the caller).

The check refuses imports, function and class definitions, lambdas, ``global``, names
and attributes that start with an underscore (``__class__``, ``__globals__``, ...),
attributes outside a list of tensor methods, and the names of builtins that reach outside
(``open``, ``eval``, ``exec``, ``getattr``, ``__import__``, ...). The values stay plain
Python and torch objects, so the list of attributes is what keeps an expression from
walking from a tensor to a module, a frame or a file.

The package holds :mod:`.typed` (the typed tensor base class, Scalar and region views),
:mod:`.tensor_types` (the other NEML2 types), :mod:`.functions` (the free functions),
:mod:`.namespace` (the stand-ins and the lists of allowed and forbidden names) and
:mod:`.evaluator` (the check and the evaluation).
"""

from .evaluator import ExprError, ExprRefused, check_code, dedent_code, evaluate
from .namespace import ALLOWED_ATTRIBUTES as ALLOWED_ATTRIBUTES
from .namespace import FORBIDDEN_NAMES as FORBIDDEN_NAMES
from .namespace import MATH as MATH
from .namespace import MATH_MEMBERS as MATH_MEMBERS
from .namespace import SAFE_BUILTINS as SAFE_BUILTINS
from .namespace import TENSOR_ATTRIBUTES as TENSOR_ATTRIBUTES
from .namespace import TORCH as TORCH
from .namespace import TORCH_CONSTANTS as TORCH_CONSTANTS
from .namespace import TORCH_FUNCTIONS as TORCH_FUNCTIONS
from .namespace import base_namespace
from .tensor_types import EXPR_TYPES, MRP, R2, SR2, SSR4, WR2, MillerIndex, Quaternion, Vec
from .typed import DTYPE as DTYPE
from .typed import Region, Scalar, TypedTensor

__all__ = [
    "EXPR_TYPES",
    "MRP",
    "R2",
    "SR2",
    "SSR4",
    "WR2",
    "ExprError",
    "ExprRefused",
    "MillerIndex",
    "Quaternion",
    "Region",
    "Scalar",
    "TypedTensor",
    "Vec",
    "base_namespace",
    "check_code",
    "dedent_code",
    "evaluate",
]
