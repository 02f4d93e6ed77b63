"""Time integration blocks with NEML2's names: backward Euler residuals, forward Euler
updates and variable rates, for every tensor type NEML2 instantiates them with (see
:data:`VARIANTS`).

A block names one ``variable``; NEML2's conventions derive the rest from it: ``<v>~1``
(the value at the start of the step), ``<v>_rate``, ``<v>_residual``, and the time
``t`` with ``t~1``. ``dt = t - t~1``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import torch

from ..hit import Section
from ..tensors import base_shape, identity_block, per_point
from .base import Blocks, Model, Tensors, check_distinct, variable_name
from .block import SCALAR, Block
from .registry import register


def _unit(shape: tuple[int, ...], like: torch.Tensor) -> torch.Tensor:
    """d v / d v per point, ``(B, *shape, *shape)``: ones for a scalar, identities else."""
    return per_point(identity_block(shape, like), like.shape[0])


def _scale(c: torch.Tensor, block: torch.Tensor) -> torch.Tensor:
    """A per-point scalar ``(B,)`` times a per-point block ``(B, ...)``."""
    return c.reshape((-1,) + (1,) * (block.dim() - 1)) * block


def _times(c: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return c.reshape((-1,) + (1,) * (v.dim() - 1)) * v


class _TimeBlock(Block):
    """A block on one ``variable`` of base shape ``shape`` and the time ``t``; the names of
    the other variables derive from those two (see the module docstring)."""

    shape: ClassVar[tuple[int, ...]]
    #: option -> (role key, derived suffix on the variable or the time)
    roles: ClassVar[tuple[str, ...]]
    outputs_role: ClassVar[str]

    @classmethod
    def derive(cls, section: Section) -> dict[str, str]:
        if "variable" not in section.params:
            raise section.error(
                None, f"[{section.full_name}]: missing required parameter 'variable'"
            )
        v = variable_name(section, "variable", "")
        t = variable_name(section, "time", "t")
        rate = variable_name(section, "rate", f"{v}_rate") if "rate" in cls.options else f"{v}_rate"
        return {"v": v, "v~1": f"{v}~1", "t": t, "t~1": f"{t}~1", "rate": rate}

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        names = cls.derive(section)
        used = {k: names[k] for k in (*cls.roles, cls.outputs_role)}
        check_distinct(section, used)
        return cls(section.name, used, {}, section)

    def variable_specs(
        self,
    ) -> tuple[list[tuple[str, tuple[int, ...]]], list[tuple[str, tuple[int, ...]]]]:
        shape = {"t": SCALAR, "t~1": SCALAR}
        ins = [(k, shape.get(k, self.shape)) for k in self.roles]
        return ins, [(self.outputs_role, self.shape)]


class _BackwardEuler(_TimeBlock):
    """``<v>_residual = v - v~1 - (t - t~1) rate``."""

    roles = ("v", "v~1", "t", "t~1", "rate")
    outputs_role = "residual"
    options = frozenset({"variable", "time", "rate", "variable_residual"})

    @classmethod
    def derive(cls, section: Section) -> dict[str, str]:
        names = super().derive(section)
        names["residual"] = variable_name(section, "variable_residual", f"{names['v']}_residual")
        return names

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        v, v_old, rate = x["v"], x["v~1"], x["rate"]
        dt = x["t"] - x["t~1"]
        r = v - v_old - _times(dt, rate)
        one = _unit(self.shape, v)
        jac = {
            "residual": {
                "v": one,
                "v~1": -one,
                "rate": _scale(-dt, one),
                "t": -rate,
                "t~1": rate.clone(),
            }
        }
        return {"residual": r}, jac, {}


class _ForwardEuler(_TimeBlock):
    """``v = old_variable + (t - t~1) rate``; ``old_variable`` defaults to ``v~1``."""

    roles = ("v~1", "t", "t~1", "rate")
    outputs_role = "v"
    options = frozenset({"variable", "time", "rate", "old_variable"})

    @classmethod
    def derive(cls, section: Section) -> dict[str, str]:
        names = super().derive(section)
        names["v~1"] = variable_name(section, "old_variable", names["v~1"])
        return names

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        v_old, rate = x["v~1"], x["rate"]
        dt = x["t"] - x["t~1"]
        one = _unit(self.shape, v_old)
        jac = {"v": {"v~1": one, "rate": _scale(dt, one), "t": rate.clone(), "t~1": -rate}}
        return {"v": v_old + _times(dt, rate)}, jac, {}


class _VariableRate(_TimeBlock):
    """``<v>_rate = (v - v~1) / (t - t~1)``."""

    roles = ("v", "v~1", "t", "t~1")
    outputs_role = "rate"
    options = frozenset({"variable", "time", "variable_rate"})

    @classmethod
    def derive(cls, section: Section) -> dict[str, str]:
        names = super().derive(section)
        names["rate"] = variable_name(section, "variable_rate", names["rate"])
        return names

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        v, v_old = x["v"], x["v~1"]
        dt = x["t"] - x["t~1"]
        rate = _times(1 / dt, v - v_old)
        one = _unit(self.shape, v)
        over = _times(1 / dt, rate)
        jac = {
            "rate": {"v": _scale(1 / dt, one), "v~1": _scale(-1 / dt, one), "t": -over, "t~1": over}
        }
        return {"rate": rate}, jac, {}


#: The tensor types NEML2 3.1.0 instantiates each family with.
VARIANTS: dict[str, tuple[str, ...]] = {
    "BackwardEulerTimeIntegration": ("Scalar", "SR2", "R2", "Vec"),
    "ForwardEulerTimeIntegration": ("Scalar", "SR2", "R2"),
    "VariableRate": ("Scalar", "Vec", "SR2", "R2"),
}


def _variants() -> None:
    """Register ``<type><family>`` for every entry of :data:`VARIANTS`."""
    bases = {
        "BackwardEulerTimeIntegration": _BackwardEuler,
        "ForwardEulerTimeIntegration": _ForwardEuler,
        "VariableRate": _VariableRate,
    }
    for suffix, types in VARIANTS.items():
        base = bases[suffix]
        for prefix in types:
            cls = type(
                f"{prefix}{suffix}",
                (base,),
                {
                    "type_name": f"{prefix}{suffix}",
                    "shape": base_shape(prefix),
                    "options": base.options,
                    "__doc__": f"{base.__doc__} ({prefix})",
                },
            )
            globals()[cls.__name__] = register(cls)


_variants()
