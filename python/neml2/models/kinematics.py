"""Kinematics with NEML2 3.1.0's names, options and defaults: GreenLagrangeStrain,
ThermalDeformationJacobian, SwellingAndPhaseChangeDeformationJacobian and
VolumeAdjustDeformationGradient.

Every variable key defaults to its own name. A Scalar option is a number or the name of
a ``[Tensors]`` block holding one Scalar. The options NEML2 lets a user promote are the
parameters ``<block>.<option>`` here; the others (NEML2 declares them without
promotion) are constants of the model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import torch

from ..hit import Section
from ..tensors import base_shape, full_to_sr2, identity_block, per_point
from .base import Blocks, Model, Tensors, check_distinct
from .block import SCALAR, Block, identity
from .elasticity_tensors import one_scalar
from .registry import register

__all__ = [
    "GreenLagrangeStrain",
    "ScalarOptions",
    "SwellingAndPhaseChangeDeformationJacobian",
    "ThermalDeformationJacobian",
    "VolumeAdjustDeformationGradient",
]

R2 = base_shape("R2")
SR2 = base_shape("SR2")


class ScalarOptions(Block):
    """A :class:`Block` whose parameters (``params_spec``, promotable) and constants
    (``constants``, fixed when the model is built) are Scalars, each required and given
    as a number or a [Tensors] name."""

    constants: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: object) -> None:
        cls.extra_options = frozenset(cls.constants)
        super().__init_subclass__(**kwargs)

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        names = cls.default_names(section)
        check_distinct(section, names)
        values = {key: float(one_scalar(section, key)) for key, _ in cls.params_spec}
        return cls(section.name, names, values, section)

    def configure(self, section: Section | None) -> None:
        #: key -> value of each constant
        self.fixed = {}
        if section is not None:
            self.fixed = {key: float(one_scalar(section, key)) for key in self.constants}


@register
class GreenLagrangeStrain(Block):
    """``strain = (F^T F - I) / 2`` (SR2) of ``deformation_gradient`` ``F`` (R2)."""

    type_name = "GreenLagrangeStrain"
    inputs_spec = (("deformation_gradient", "deformation_gradient", R2),)
    outputs_spec = (("strain", "strain", SR2),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        F = x["deformation_gradient"]
        C = (F.unsqueeze(-1) * F.unsqueeze(-2)).sum(-3)  # F^T F
        strain = 0.5 * (full_to_sr2(C) - identity(F))
        if not derivatives:
            return {"strain": strain}, {}, {}
        # d strain = sym(F^T dF); along dF = e_p e_q^T, F^T dF has entries F_pk delta_lq
        eye = identity_block((3,), F)
        directions = torch.einsum("...pk,ql->...pqkl", F, eye)
        d = torch.einsum("...pqi->...ipq", full_to_sr2(directions))
        return {"strain": strain}, {"strain": {"deformation_gradient": d}}, {}


@register
class ThermalDeformationJacobian(ScalarOptions):
    """``jacobian = 1 + CTE (temperature - reference_temperature)``; ``CTE`` is the
    parameter, ``reference_temperature`` a constant."""

    type_name = "ThermalDeformationJacobian"
    inputs_spec = (("temperature", "temperature", SCALAR),)
    outputs_spec = (("jacobian", "jacobian", SCALAR),)
    params_spec = (("CTE", None),)
    constants = ("reference_temperature",)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        T, alpha = x["temperature"], p["CTE"]
        change = T - self.fixed["reference_temperature"]
        out = {"jacobian": 1 + alpha * change}
        if not derivatives:
            return out, {}, {}
        jac = {"jacobian": {"temperature": alpha * torch.ones_like(T)}}
        return out, jac, {"jacobian": {"CTE": change}}


@register
class SwellingAndPhaseChangeDeformationJacobian(ScalarOptions):
    """``jacobian = 1 + a c f + (1 - c) f dO`` for the ``fluid_fraction`` ``f``, with the
    parameter ``phase_fraction`` ``c`` and the constants ``swelling_coefficient`` ``a``
    and ``reference_volume_difference`` ``dO``."""

    type_name = "SwellingAndPhaseChangeDeformationJacobian"
    inputs_spec = (("fluid_fraction", "fluid_fraction", SCALAR),)
    outputs_spec = (("jacobian", "jacobian", SCALAR),)
    params_spec = (("phase_fraction", None),)
    constants = ("swelling_coefficient", "reference_volume_difference")

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        f, c = x["fluid_fraction"], p["phase_fraction"]
        a, dO = self.fixed["swelling_coefficient"], self.fixed["reference_volume_difference"]
        out = {"jacobian": 1 + a * c * f + (1 - c) * f * dO}
        if not derivatives:
            return out, {}, {}
        jac = {"jacobian": {"fluid_fraction": (a * c + (1 - c) * dO) * torch.ones_like(f)}}
        return out, jac, {"jacobian": {"phase_fraction": (a - dO) * f}}


@register
class VolumeAdjustDeformationGradient(Block):
    """``output = jacobian^(-1/3) input``: the deformation gradient ``input`` (R2) with
    the volume change ``jacobian`` (Scalar) taken out."""

    type_name = "VolumeAdjustDeformationGradient"
    inputs_spec = (("input", "input", R2), ("jacobian", "jacobian", SCALAR))
    outputs_spec = (("output", "output", R2),)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        F, J = x["input"], x["jacobian"]
        scale = J ** (-1.0 / 3.0)
        out = {"output": scale[..., None, None] * F}
        if not derivatives:
            return out, {}, {}
        ones = per_point(identity_block(R2, F), F.shape[0])
        dJ = (-1.0 / 3.0) * (J ** (-4.0 / 3.0))[..., None, None] * F
        jac = {"output": {"input": scale[..., None, None, None, None] * ones, "jacobian": dJ}}
        return out, jac, {}
