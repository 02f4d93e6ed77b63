"""``LinearIsotropicElasticJ2TrialStressUpdate``: the scalar trial-stress correction of a
J2 return map with isotropic linear elasticity, with NEML2's options and defaults."""

from __future__ import annotations

from collections.abc import Mapping

import torch

from ..hit import Section
from .base import Blocks, Model, Tensors, check_distinct
from .block import SCALAR, Block
from .elasticity import coefficient_types
from .registry import register


@register
class LinearIsotropicElasticJ2TrialStressUpdate(Block):
    """``updated_trial_stress = elastic_trial_stress - 3 G (ep - ep~1)`` with ``ep`` the
    ``equivalent_plastic_strain`` (and ``ep~1`` its value at the start of the step) and
    ``G = E / (2 (1 + nu))``. ``coefficients`` and ``coefficient_types`` give ``E`` and
    ``nu`` (NEML2 3.1.0 reads exactly ``YOUNGS_MODULUS`` and ``POISSONS_RATIO``, in
    either order), the parameters ``<block>.E`` and ``<block>.nu``."""

    type_name = "LinearIsotropicElasticJ2TrialStressUpdate"
    inputs_spec = (
        ("elastic_trial_stress", "elastic_trial_stress", SCALAR),
        ("equivalent_plastic_strain", "equivalent_plastic_strain", SCALAR),
        ("old_equivalent_plastic_strain", None, SCALAR),
    )
    outputs_spec = (("updated_trial_stress", "updated_trial_stress", SCALAR),)
    params_spec = (("E", None), ("nu", None))
    options = frozenset(
        {
            "elastic_trial_stress",
            "equivalent_plastic_strain",
            "updated_trial_stress",
            "coefficients",
            "coefficient_types",
        }
    )

    @classmethod
    def default_names(cls, section: Section) -> dict[str, str]:
        names = super().default_names(section)
        names["old_equivalent_plastic_strain"] = f"{names['equivalent_plastic_strain']}~1"
        return names

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        names = cls.default_names(section)
        check_distinct(section, names)
        symbols = coefficient_types(section, 2, ("YOUNGS_MODULUS", "POISSONS_RATIO"))
        numbers = section.strings("coefficients", count=2)
        try:
            values = {s: float(v) for s, v in zip(symbols, numbers, strict=True)}
        except ValueError:
            raise section.error(
                "coefficients", "parameter 'coefficients': expected two numbers"
            ) from None
        return cls(section.name, names, values, section)

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        E, nu = p["E"], p["nu"]
        G = E / (2 * (1 + nu))
        dep = x["equivalent_plastic_strain"] - x["old_equivalent_plastic_strain"]
        s = x["elastic_trial_stress"]
        jac = {
            "elastic_trial_stress": torch.ones_like(s),
            "equivalent_plastic_strain": -3 * G * torch.ones_like(s),
            "old_equivalent_plastic_strain": 3 * G * torch.ones_like(s),
        }
        pjac = {"E": -3 * G / E * dep, "nu": 3 * G / (1 + nu) * dep}
        out = {"updated_trial_stress": s - 3 * G * dep}
        return out, {"updated_trial_stress": jac}, {"updated_trial_stress": pjac}
