"""The checks the C++ loader makes on a compiled artifact, made from Python too.

``include/neml2/aoti`` refuses a damaged or inconsistent artifact before it runs it:
``artifact/Meta.h`` checks every field of ``model_meta.json`` and its type,
``detail/zip.h`` the CRC-32 of every member of a ``.pt2`` before torch opens the library
inside it, and ``Model.h`` each graph's call spec and the returns of one call on one point
against the meta. :func:`check_meta` and :func:`check_package` make the same checks with
the same messages; :func:`check_call_spec` and :func:`check_returns` those that need a
loaded graph. A failed check raises :class:`~neml2.errors.ArtifactError`, which the
command-line tools print as one line.

Two checks go further than the C++ loader and need no call: a package whose archive is
named after another graph of the model (``jacobian.pt2`` copied over ``forward.pt2``), and
the argument dtypes and sizes that torch writes into the package's generated source.

The package holds :mod:`.common` (the names and helpers the checks share), :mod:`.meta`
(``model_meta.json``), :mod:`.package` (the ``.pt2`` packages) and :mod:`.graph` (a
loaded graph).
"""

from .common import (
    BATCHED_ARGS,
    COUNT_DTYPE,
    DTYPE_NAMES,
    GRAPHS,
    INTO_SUFFIX,
    MAX_SIZE,
    META_DTYPES,
    MISMATCH,
    PER_POINT_SUFFIX,
    ROLES,
    Meta,
    arg_dtype,
    arg_shape,
    dtype_name,
    setting_spec,
    setting_tensor,
    shape_str,
)
from .graph import check_call_spec, check_returns, probe_args, return_shape, spec_leaves
from .meta import check_meta, kind_name
from .package import check_package, check_wrapper_signature, wrapper_signature, zip_damage

__all__ = [
    "BATCHED_ARGS",
    "COUNT_DTYPE",
    "DTYPE_NAMES",
    "GRAPHS",
    "INTO_SUFFIX",
    "MAX_SIZE",
    "META_DTYPES",
    "MISMATCH",
    "PER_POINT_SUFFIX",
    "ROLES",
    "Meta",
    "arg_dtype",
    "arg_shape",
    "check_call_spec",
    "check_meta",
    "check_package",
    "check_returns",
    "check_wrapper_signature",
    "dtype_name",
    "kind_name",
    "probe_args",
    "return_shape",
    "setting_spec",
    "setting_tensor",
    "shape_str",
    "spec_leaves",
    "wrapper_signature",
    "zip_damage",
]
