"""Material models: the base class, the registry of types, and the built-in models."""

# modules whose import registers their types
from . import (  # noqa: F401
    annealing,
    chemical_reactions,
    cohesive,
    cohesive_mixed_mode,
    conversions,
    crystal,
    crystal_kinematics,
    crystal_slip,
    eigenstrains,
    elasticity_tensors,
    finite_volume,
    finite_volume_fluxes,
    finite_volume_sources,
    generic,
    hardening,
    interpolation,
    kinematics,
    kocks_mecking,
    kwn_growth,
    kwn_nucleation,
    normality,
    phase_field_fracture,
    porous,
    porous_flow,
    reduction,
    return_mapping,
    rotations,
    scalar_functions,
    viscoelasticity,
)
from .base import Evaluation, Model, Status, Variable, model_section
from .combination import ScalarLinearCombination, SR2LinearCombination
from .composed import ComposedModel
from .elasticity import LinearIsotropicElasticity
from .implicit import ImplicitUpdate
from .normality import Normality
from .plasticity import (
    AssociativeIsotropicPlasticHardening,
    AssociativeJ2FlowDirection,
    AssociativeKinematicPlasticHardening,
    AssociativePlasticFlow,
    FredrickArmstrongPlasticHardening,
    IsotropicMandelStress,
    LinearIsotropicHardening,
    LinearKinematicHardening,
    MinMapComplementarity,
    PerzynaPlasticFlowRate,
    SR2Invariant,
    VoceIsotropicHardening,
    YieldFunction,
)
from .predictors import ConstantExtrapolationPredictor
from .registry import build_model, model_types, register
from .thermal import ThermalEigenstrain
from .time_integration import _variants as _time_integration  # noqa: F401 (registers)
from .viscoplasticity import J2Viscoplasticity

__all__ = [
    "AssociativeIsotropicPlasticHardening",
    "AssociativeJ2FlowDirection",
    "AssociativeKinematicPlasticHardening",
    "AssociativePlasticFlow",
    "ComposedModel",
    "ConstantExtrapolationPredictor",
    "Evaluation",
    "FredrickArmstrongPlasticHardening",
    "ImplicitUpdate",
    "IsotropicMandelStress",
    "J2Viscoplasticity",
    "LinearIsotropicElasticity",
    "LinearIsotropicHardening",
    "LinearKinematicHardening",
    "MinMapComplementarity",
    "Model",
    "Normality",
    "PerzynaPlasticFlowRate",
    "SR2Invariant",
    "SR2LinearCombination",
    "ScalarLinearCombination",
    "Status",
    "ThermalEigenstrain",
    "Variable",
    "VoceIsotropicHardening",
    "YieldFunction",
    "build_model",
    "model_section",
    "model_types",
    "register",
]
