"""Generic building blocks, one per NEML2 tensor type: copies, constant and input
parameters, parameters as variables, multiplications and determinants.

NEML2 instantiates the first four families for every tensor type of :data:`TYPES`
(``Copy<T>``, ``<T>ConstantParameter``, ``<T>InputParameter``, ``<T>ParameterToVariable``).
Variable rates and Euler time integration of every type live in :mod:`.time_integration`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

import torch

from ..hit import _FALSE, _TRUE, Section
from ..tensors import (
    base_shape,
    identity_block,
    per_point,
    r2_cofactor,
    r2_det,
    r2_inverse,
    sr2_det,
    sr2_det_derivative,
)
from .base import Blocks, Leaf, Model, Tensors, Variable, from_and_to, tensor_option, variable_name
from .block import SCALAR, Block
from .registry import register

#: The tensor types NEML2 3.1.0 has Copy, ConstantParameter, InputParameter and
#: ParameterToVariable variants for.
TYPES = ("Scalar", "Vec", "R2", "SR2", "WR2", "SSR4", "MRP", "MillerIndex")

R2 = base_shape("R2")
SR2 = base_shape("SR2")


def _register_variant(base: type, type_name: str, tensor_type: str) -> None:
    """Register a subclass of ``base`` for one tensor type under NEML2's name."""
    cls = type(
        type_name,
        (base,),
        {
            "type_name": type_name,
            "tensor_type": tensor_type,
            "shape": base_shape(tensor_type),
            "options": base.options,
            "__doc__": f"{base.__doc__} ({tensor_type})",
        },
    )
    globals()[type_name] = register(cls)


class _Identity(Block):
    """``out = in``: the identity from one variable of the type to another."""

    shape: ClassVar[tuple[int, ...]]
    tensor_type: ClassVar[str]
    #: (input key, output key): each key is also the variable's default name
    keys: ClassVar[tuple[str, str]]

    def variable_specs(
        self,
    ) -> tuple[list[tuple[str, tuple[int, ...]]], list[tuple[str, tuple[int, ...]]]]:
        return [(self.keys[0], self.shape)], [(self.keys[1], self.shape)]

    @classmethod
    def default_names(cls, section: Section) -> dict[str, str]:
        return {k: variable_name(section, k, k) for k in cls.keys}

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        source, target = self.keys
        value = x[source]
        one = per_point(identity_block(self.shape, value), value.shape[0])
        return {target: value.clone()}, {target: {source: one}}, {}


class _Copy(_Identity):
    """``to = from``."""

    keys = ("from", "to")
    options = frozenset(keys)


class _InputParameter(_Identity):
    """``parameter = variable``: an input variable exposed as a parameter output."""

    keys = ("variable", "parameter")
    options = frozenset(keys)


class _ParameterOutput(Model):
    """An output variable holding the value of a (promotable) parameter.

    ``value_key`` is the option holding the value (numbers in place or a [Tensors]
    block) and ``param`` the parameter's name, ``<block>.<param>``; ``output_key`` names
    the output variable, by default ``default_output`` (or the block's name when None).
    The model has no inputs: its output is one point, which broadcasts over any batch.
    """

    shape: ClassVar[tuple[int, ...]]
    tensor_type: ClassVar[str]
    value_key: ClassVar[str]
    param: ClassVar[str]
    output_key: ClassVar[str]
    default_output: ClassVar[str | None]

    def __init__(self, name: str, output: str, value: torch.Tensor) -> None:
        self.target = output
        self.param_name = f"{name}.{self.param}"
        super().__init__(name, [], [Variable(output, self.shape)], {self.param_name: value})

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        output = variable_name(section, cls.output_key, cls.default_output or section.name)
        value = tensor_option(section, cls.value_key, cls.tensor_type)
        if tuple(value.shape) != cls.shape:
            raise section.error(
                cls.value_key,
                f"parameter '{cls.value_key}': expected one {cls.tensor_type}, got a tensor of "
                f"shape {tuple(value.shape)}",
            )
        return cls(section.name, output, value)

    def eval_forward(self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]) -> Tensors:
        # a copy: the output must not change when the parameter is later changed in place
        return {self.target: p[self.param_name].unsqueeze(0).clone()}

    def eval_jacobian(self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]) -> Blocks:
        return {self.target: {}}

    def eval_param_jacobian(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]
    ) -> Blocks:
        value = p[self.param_name]
        return {self.target: {self.param_name: identity_block(self.shape, value)}}

    def param_jacobian_batched(self, of: str, param: str) -> bool:
        return False


class _ConstantParameter(_ParameterOutput):
    """``parameter = value``, a constant (promotable) parameter as a variable; the output
    is named after the block unless ``parameter`` names it."""

    options = frozenset({"parameter", "value"})
    value_key = "value"
    param = "value"
    output_key = "parameter"
    default_output = None


class _ParameterToVariable(_ParameterOutput):
    """``to = from``, a (promotable) parameter as a variable; the parameter is named
    ``<block>.param`` as in NEML2."""

    options = frozenset({"from", "to"})
    value_key = "from"
    param = "param"
    output_key = "to"
    default_output = "to"


for _t in TYPES:
    _register_variant(_Copy, f"Copy{_t}", _t)
    _register_variant(_ConstantParameter, f"{_t}ConstantParameter", _t)
    _register_variant(_InputParameter, f"{_t}InputParameter", _t)
    _register_variant(_ParameterToVariable, f"{_t}ParameterToVariable", _t)


def _booleans(section: Section, key: str, default: Sequence[bool]) -> list[bool]:
    """A list of booleans (true/false, on/off, yes/no), or ``default`` without the key."""
    if key not in section.params:
        return list(default)
    values: list[bool] = []
    for word in section.strings(key):
        if word.lower() not in _TRUE | _FALSE:
            raise section.error(
                key,
                f"parameter '{key}': expected booleans (true/false, on/off, yes/no), got '{word}'",
            )
        values.append(word.lower() in _TRUE)
    if not values:
        raise section.error(key, f"parameter '{key}': expected at least one boolean")
    return values


@register
class ScalarMultiplication(Leaf):
    """``to = scaling * prod_i f_i``, ``f_i = from_i`` or ``1 / from_i`` where
    ``reciprocal`` (one boolean per variable, or one for all; default false) says so.
    ``scaling`` (default 1) is the parameter ``<block>.scaling``. A variable listed twice
    enters the product twice."""

    type_name = "ScalarMultiplication"
    options = frozenset({"from", "to", "scaling", "reciprocal"})

    def __init__(
        self,
        name: str,
        factors: Sequence[str],
        target: str,
        reciprocal: Sequence[bool],
        scaling: torch.Tensor,
    ) -> None:
        self.factors = list(factors)
        self.reciprocal = list(reciprocal)
        self.target = target
        self.scaling = f"{name}.scaling"
        unique = list(dict.fromkeys(factors))
        super().__init__(
            name,
            [Variable(v, SCALAR) for v in unique],
            [Variable(target, SCALAR)],
            {self.scaling: scaling},
        )

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        factors, target = from_and_to(section, "to", distinct=False)
        reciprocal = _booleans(section, "reciprocal", [False])
        if len(reciprocal) == 1:
            reciprocal = reciprocal * len(factors)
        if len(reciprocal) != len(factors):
            raise section.error(
                "reciprocal",
                f"parameter 'reciprocal': expected 1 or {len(factors)} booleans (one per "
                f"variable in 'from'), got {len(reciprocal)}",
            )
        scaling = tensor_option(section, "scaling", "Scalar", 1.0)
        return cls(section.name, factors, target, reciprocal, scaling)

    def kernel(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        A = p[self.scaling]
        values = [x[v] for v in self.factors]
        terms = [1 / v if inv else v for v, inv in zip(values, self.reciprocal, strict=True)]
        product = terms[0]
        for term in terms[1:]:
            product = product * term
        out = {self.target: A * product}
        if not derivatives:
            return out, {}, {}
        row: Tensors = {}
        for i, (name, value) in enumerate(zip(self.factors, values, strict=True)):
            # d f_i / d from_i times the other factors (no division: from_j may be zero)
            d = -1 / (value * value) if self.reciprocal[i] else torch.ones_like(value)
            for j, term in enumerate(terms):
                if j != i:
                    d = d * term
            row[name] = row[name] + A * d if name in row else A * d
        return out, {self.target: row}, {self.target: {self.scaling: product}}


@register
class R2Multiplication(Block):
    """``to = op(A) op(B)`` for full second-order tensors, ``op(X)`` being ``X``, its
    inverse (``invert_A``/``invert_B``), its transpose (``transpose_A``/``transpose_B``)
    or the transposed inverse (both); all four default to false."""

    type_name = "R2Multiplication"
    inputs_spec = (("A", "A", R2), ("B", "B", R2))
    outputs_spec = (("to", "to", R2),)
    FLAGS: ClassVar[tuple[str, ...]] = ("invert_A", "invert_B", "transpose_A", "transpose_B")
    extra_options = frozenset(FLAGS)

    def configure(self, section: Section | None) -> None:
        self.flags = {k: False for k in self.FLAGS}
        if section is not None:
            self.flags = {k: section.boolean(k, False) for k in self.FLAGS}

    def _operand(self, X: torch.Tensor, which: str) -> tuple[torch.Tensor, torch.Tensor]:
        """``op(X)`` and d op(X) / d X, ``(B, 3, 3, 3, 3)``."""
        eye = identity_block((3,), X)
        transpose, invert = self.flags[f"transpose_{which}"], self.flags[f"invert_{which}"]
        if invert:
            op = r2_inverse(X)
            if transpose:
                op = op.transpose(-1, -2)
                # d inv(X^T)_ik / d X_pq = -op_iq op_pk
                d = -op[..., :, None, None, :] * op.transpose(-1, -2)[..., None, :, :, None]
            else:
                # d inv(X)_ik / d X_pq = -op_ip op_qk
                d = -op[..., :, None, :, None] * op.transpose(-1, -2)[..., None, :, None, :]
            return op, d
        n = X.shape[0]
        if transpose:
            d = eye[None, :, :, None] * eye[:, None, None, :]  # delta_iq delta_kp
            return X.transpose(-1, -2), per_point(d, n)
        d = eye[:, None, :, None] * eye[None, :, None, :]  # delta_ip delta_kq
        return X, per_point(d, n)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        a, da = self._operand(x["A"], "A")
        b, db = self._operand(x["B"], "B")
        to = torch.matmul(a, b)
        if not derivatives:
            return {"to": to}, {}, {}
        jac = {
            "to": {
                "A": torch.einsum("...ikpq,...kj->...ijpq", da, b),
                "B": torch.einsum("...ik,...kjpq->...ijpq", a, db),
            }
        }
        return {"to": to}, jac, {}


class _Determinant(Block):
    """``determinant = det(input)``."""

    outputs_spec = (("determinant", "determinant", SCALAR),)


@register
class R2Determinant(_Determinant):
    """``determinant = det(input)`` of a full second-order tensor; d det / d input is the
    cofactor ``det(input) input^-T``."""

    type_name = "R2Determinant"
    inputs_spec = (("input", "input", R2),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        F = x["input"]
        return {"determinant": r2_det(F)}, {"determinant": {"input": r2_cofactor(F)}}, {}


@register
class SR2Determinant(_Determinant):
    """``determinant = det(input)`` of a symmetric second-order tensor (Mandel)."""

    type_name = "SR2Determinant"
    inputs_spec = (("input", "input", SR2),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        s = x["input"]
        return {"determinant": sr2_det(s)}, {"determinant": {"input": sr2_det_derivative(s)}}, {}
