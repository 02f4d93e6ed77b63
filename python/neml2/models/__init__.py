"""Material models: the base class, the registry of types, and the built-in models."""

from .base import Model, Variable, build_model, model_section, model_types, register
from .elasticity import LinearIsotropicElasticity

__all__ = [
    "LinearIsotropicElasticity",
    "Model",
    "Variable",
    "build_model",
    "model_section",
    "model_types",
    "register",
]
