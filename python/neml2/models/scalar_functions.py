"""Scalar functions: p-norms, the Macaulay split, the Fischer-Burmeister
complementarity, the irreversible scalar, the Arrhenius parameter and the mixed
control setup.

Each type keeps NEML2 3.1.0's type name, option keys, defaults and variable names, and
its regularisations: the machine epsilon inside the p-norm and the Fischer-Burmeister
root, and the Heaviside function ``(sign(x) + 1) / 2`` (one half at zero) as the
derivative of the Macaulay bracket.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch

from ..hit import Section
from .base import Blocks, Leaf, Model, Tensors, Variable, from_and_to
from .block import SCALAR, SR2, Block
from .registry import register

__all__ = [
    "ArrheniusParameter",
    "FBComplementarity",
    "IrreversibleScalar",
    "MacaulaySplit",
    "MixedControlSetup",
    "ScalarPNorm",
]


def machine_epsilon(like: torch.Tensor) -> float:
    """The spacing of floating point numbers at 1 in ``like``'s dtype (NEML2's regulariser)."""
    return torch.finfo(like.dtype).eps


def inequality_sign(section: Section | None, key: str, default: str) -> float:
    """-1 for an ``LE`` inequality, +1 for ``GE`` (the option ``key`` of ``section``)."""
    if section is None:
        return -1.0 if default == "LE" else 1.0
    text = section.string(key, default)
    if text not in ("LE", "GE"):
        raise section.error(key, f"parameter '{key}': expected LE or GE, got '{text}'")
    return -1.0 if text == "LE" else 1.0


@register
class ScalarPNorm(Leaf):
    """``to = (sum_i w_i |from_i|^p + eps)^(1/p)``, eps the machine epsilon.

    Keys: ``from`` (the Scalar inputs), ``to`` (default ``to``), ``exponent`` (p,
    required) and ``weights`` (one per input, or one for all; default 1). Parameters:
    ``<block>.exponent`` and ``<block>.weights`` (shape ``(n,)``).
    """

    type_name = "ScalarPNorm"
    options = frozenset({"from", "to", "exponent", "weights"})

    def __init__(
        self,
        name: str,
        sources: Sequence[str],
        target: str,
        exponent: float,
        weights: Sequence[float],
    ) -> None:
        self.sources = list(sources)
        self.target = target
        self.exponent = f"{name}.exponent"
        self.weights = f"{name}.weights"
        params = {
            self.exponent: torch.tensor(float(exponent), dtype=Model.dtype),
            self.weights: torch.tensor([float(w) for w in weights], dtype=Model.dtype),
        }
        super().__init__(
            name, [Variable(s, SCALAR) for s in self.sources], [Variable(target, SCALAR)], params
        )

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        sources, target = from_and_to(section, "to")
        weights = section.numbers("weights", [1.0])
        if len(weights) == 1:
            weights = weights * len(sources)
        if len(weights) != len(sources):
            raise section.error(
                "weights",
                f"parameter 'weights': expected {len(sources)} (or 1) values, got {len(weights)}",
            )
        return cls(section.name, sources, target, section.number("exponent"), weights)

    def kernel(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        xs = torch.stack([x[s] for s in self.sources], -1)  # (B, n)
        w, q = p[self.weights], p[self.exponent]
        a = xs.abs()
        powers = a**q
        total = (w * powers).sum(-1) + machine_epsilon(xs)
        y = total ** (1.0 / q)
        if not derivatives:
            return {self.target: y}, {}, {}
        scale = (y ** (1.0 - q)).unsqueeze(-1)  # (B, 1)
        dx = w * torch.sign(xs) * a ** (q - 1.0) * scale
        jac = {self.target: {s: dx[..., i] for i, s in enumerate(self.sources)}}
        positive = a > 0
        log_a = torch.log(torch.where(positive, a, torch.ones_like(a)))
        weighted_log = torch.where(positive, w * powers * log_a, torch.zeros_like(a)).sum(-1)
        dq = y * (weighted_log / (q * total) - torch.log(total) / (q * q))
        pjac = {self.target: {self.weights: powers * scale / q, self.exponent: dq}}
        return {self.target: y}, jac, pjac


@register
class MacaulaySplit(Block):
    """``to_positive = <from>`` (its Macaulay bracket) and ``to_negative = from - <from>``;
    the derivatives are H(from) and 1 - H(from), H = (sign + 1) / 2 (one half at zero)."""

    type_name = "MacaulaySplit"
    inputs_spec = (("from", "from", SCALAR),)
    outputs_spec = (("to_positive", "to_positive", SCALAR), ("to_negative", "to_negative", SCALAR))

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        v = x["from"]
        step = (torch.sign(v) + 1.0) / 2.0
        positive = v * step
        out = {"to_positive": positive, "to_negative": v - positive}
        jac = {"to_positive": {"from": step}, "to_negative": {"from": 1.0 - step}}
        return out, jac, {}


@register
class FBComplementarity(Block):
    """``complementarity = sa a + sb b - sqrt(a^2 + b^2 + eps)``, the Fischer-Burmeister
    function; ``sa``/``sb`` = -1 for LE and +1 for GE (``a_inequality`` default LE,
    ``b_inequality`` default GE), eps the machine epsilon."""

    type_name = "FBComplementarity"
    inputs_spec = (("a", "a", SCALAR), ("b", "b", SCALAR))
    outputs_spec = (("complementarity", "complementarity", SCALAR),)
    extra_options = frozenset({"a_inequality", "b_inequality"})

    def configure(self, section: Section | None) -> None:
        self.signs = (
            inequality_sign(section, "a_inequality", "LE"),
            inequality_sign(section, "b_inequality", "GE"),
        )

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        a, b = x["a"], x["b"]
        sa, sb = self.signs
        root = torch.sqrt(a * a + b * b + machine_epsilon(a))
        r = sa * a + sb * b - root
        jac = {"complementarity": {"a": sa - a / root, "b": sb - b / root}}
        return {"complementarity": r}, jac, {}


@register
class IrreversibleScalar(Block):
    """``to = max(to~1, from)``: ``from`` where it exceeds the previous value ``to~1``, else
    the previous value (a ratchet). Keys: ``from`` and ``to`` (defaults ``from``, ``to``);
    the history input is always ``<to>~1``."""

    type_name = "IrreversibleScalar"
    inputs_spec = (("from", "from", SCALAR), ("to_old", None, SCALAR))
    outputs_spec = (("to", "to", SCALAR),)
    options = frozenset({"from", "to"})

    @classmethod
    def default_names(cls, section: Section) -> dict[str, str]:
        names = super().default_names(section)
        names["to_old"] = f"{names['to']}~1"
        return names

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        new, old = x["from"], x["to_old"]
        advance = new > old
        one, zero = torch.ones_like(new), torch.zeros_like(new)
        jac = {
            "to": {
                "from": torch.where(advance, one, zero),
                "to_old": torch.where(advance, zero, one),
            }
        }
        return {"to": torch.where(advance, new, old)}, jac, {}


@register
class ArrheniusParameter(Block):
    """``parameter = reference_value exp(-activation_energy / (ideal_gas_constant T))``.

    The output is named after the block unless ``parameter`` names it;
    ``ideal_gas_constant`` (required) is a constant of the model, as in NEML2, and
    ``reference_value`` and ``activation_energy`` are parameters.
    """

    type_name = "ArrheniusParameter"
    inputs_spec = (("temperature", "temperature", SCALAR),)
    outputs_spec = (("parameter", None, SCALAR),)
    params_spec = (("reference_value", None), ("activation_energy", None))
    extra_options = frozenset({"ideal_gas_constant"})
    #: The ideal gas constant where the model is built without an input file.
    R: float = 8.31446261815324

    @classmethod
    def default_names(cls, section: Section) -> dict[str, str]:
        names = super().default_names(section)
        names.setdefault("parameter", section.name)
        return names

    def configure(self, section: Section | None) -> None:
        if section is not None:
            self.R = section.number("ideal_gas_constant")

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        T = x["temperature"]
        p0, Q = p["reference_value"], p["activation_energy"]
        factor = torch.exp(-Q / (self.R * T))
        value = p0 * factor
        jac = {"parameter": {"temperature": value * Q / (self.R * T * T)}}
        pjac = {
            "parameter": {"reference_value": factor, "activation_energy": -value / (self.R * T)}
        }
        return {"parameter": value}, jac, pjac


@register
class MixedControlSetup(Block):
    """Per Mandel component: ``y = x_above`` where ``control > threshold``, else
    ``x_below``; ``z`` is the other of the two. ``threshold`` (default 0.5) is a constant."""

    type_name = "MixedControlSetup"
    inputs_spec = (
        ("control", "control", SR2),
        ("x_above", "x_above", SR2),
        ("x_below", "x_below", SR2),
    )
    outputs_spec = (("y", "y", SR2), ("z", "z", SR2))
    extra_options = frozenset({"threshold"})
    #: The threshold where the model is built without an input file.
    threshold: float = 0.5

    def configure(self, section: Section | None) -> None:
        if section is not None:
            self.threshold = section.number("threshold", 0.5)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        above = x["control"] > self.threshold
        hi, lo = x["x_above"], x["x_below"]
        out = {"y": torch.where(above, hi, lo), "z": torch.where(above, lo, hi)}
        if not derivatives:
            return out, {}, {}
        pick = torch.diag_embed(above.to(hi.dtype))
        other = torch.diag_embed((~above).to(hi.dtype))
        jac = {"y": {"x_above": pick, "x_below": other}, "z": {"x_above": other, "x_below": pick}}
        return out, jac, {}
