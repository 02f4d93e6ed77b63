"""Material models: the base class, the registry of types, and the built-in models."""

from .base import (
    Evaluation,
    Model,
    Status,
    Variable,
    build_model,
    model_section,
    model_types,
    register,
)
from .combination import ScalarLinearCombination, SR2LinearCombination
from .composed import ComposedModel
from .elasticity import LinearIsotropicElasticity
from .thermal import ThermalEigenstrain
from .viscoplasticity import J2Viscoplasticity

__all__ = [
    "ComposedModel",
    "Evaluation",
    "J2Viscoplasticity",
    "LinearIsotropicElasticity",
    "Model",
    "SR2LinearCombination",
    "ScalarLinearCombination",
    "Status",
    "ThermalEigenstrain",
    "Variable",
    "build_model",
    "model_section",
    "model_types",
    "register",
]
