"""The material model base class and its derivative contractions.

A model declares ordered inputs and outputs (each with the base shape of one material
point) and named parameters. An explicit model writes three analytic kernels,
:meth:`Model.eval_forward`, :meth:`Model.eval_jacobian` and
:meth:`Model.eval_param_jacobian`; an implicit model (one that solves an equation per
point) instead overrides :meth:`Model.evaluate`, which returns everything asked for
from one solve together with the per-point convergence :class:`Status`. The base class
derives ``jvp`` and ``param_vjp`` from the Jacobians. Shapes follow doc/artifacts.md:
batched tensors are ``(B, *base)``, and a derivative block that does not depend on the
batch is returned unbatched.

Models that NEML2's ``Normality`` may wrap also give
:meth:`Model.second_order`, their second derivatives by inputs and parameters.

The kernels take their parameters explicitly and check nothing, so ``neml2.compile``
can trace them with parameters either baked or passed as graph inputs; the public
methods (``forward``, ``jvp``, ...) validate their arguments first, accept unbatched
``(*base)`` inputs next to batched ones as the C++ runtime does, and raise
:class:`~neml2.errors.ConvergenceError` when a point of an implicit model did not converge.

The registry of model types is :mod:`neml2.models.registry`; the check of one call's batch
arguments is :class:`~neml2.models.batch.Batch`.

The package holds :mod:`.values` (variables, statuses, evaluations), :mod:`.calls` (the
checks of a call and the derivative contractions), :mod:`.model` (:class:`Model` and
:class:`Leaf`), :mod:`.options` (reading a model's input-file block), :mod:`.each_point`
(one model evaluated point by point) and :mod:`.wrapper` (the base of the models that
evaluate another one differently).
"""

from .calls import check_parameter, contract, raise_if_failed, refuse_unknown
from .model import Leaf, Model
from .options import (
    check_distinct,
    from_and_to,
    model_section,
    root_of,
    spelling,
    tensor_option,
    variable_name,
)
from .values import Blocks, Blocks2, Evaluation, Pair, SecondOrder, Status, Tensors, Variable

__all__ = [
    "Blocks",
    "Blocks2",
    "Evaluation",
    "Leaf",
    "Model",
    "Pair",
    "SecondOrder",
    "Status",
    "Tensors",
    "Variable",
    "check_distinct",
    "check_parameter",
    "contract",
    "from_and_to",
    "model_section",
    "raise_if_failed",
    "refuse_unknown",
    "root_of",
    "spelling",
    "tensor_option",
    "variable_name",
]
