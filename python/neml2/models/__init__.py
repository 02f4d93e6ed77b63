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
from .elasticity import LinearIsotropicElasticity
from .viscoplasticity import J2Viscoplasticity

__all__ = [
    "Evaluation",
    "J2Viscoplasticity",
    "LinearIsotropicElasticity",
    "Model",
    "Status",
    "Variable",
    "build_model",
    "model_section",
    "model_types",
    "register",
]
