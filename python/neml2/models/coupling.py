"""Parameters given as variable names: a parameter option that names a variable (or a
model) makes the parameter an input of the model, with derivatives with respect to it.

NEML2 resolves the value of a parameter option in this order: numbers; the name of a
``[Tensors]`` block; the name of a block of the same ``[Models]`` (its one output, or
``model.output`` to pick one), which a ``ComposedModel`` then evaluates first; otherwise
a variable name (``E = 'youngs_modulus'``). The last two couple the parameter to a
variable: the model gets that variable as one more input (after its own), the parameter
leaves its parameters, and the derivative of an output with respect to the variable is
the parameter derivative at each point's own value. Only the options NEML2 3.1.0 lets a
user couple (:data:`COUPLABLE`) accept a variable; any other keeps requiring a value.

:class:`CoupledParameters` wraps the model built with a placeholder value for each
coupled parameter and evaluates it point by point (``torch.func.vmap``), each point with
its own parameter values, so every explicit model supports coupling without a kernel of
its own. Implicit models (an ``ImplicitUpdate``) do not.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

import torch

from ..hit import _NUMBER, Section, Value
from .base import Evaluation, Model, Variable
from .base.each_point import each_point
from .elasticity import COEFFICIENT_SYMBOLS
from .registry import build_model

#: Per model type, the options whose value may name a variable or a model (NEML2 3.1.0's
#: coupled parameters). ``coefficients`` couples each of its words separately.
COUPLABLE: dict[str, tuple[str, ...]] = {
    # elasticity and kinematics
    "LinearIsotropicElasticity": ("coefficients",),
    "IsotropicElasticityTensor": ("coefficients",),
    "CubicElasticityTensor": ("coefficients",),
    "GeneralElasticity": ("elastic_stiffness_tensor",),
    "ThermalEigenstrain": ("CTE",),
    "ThermalDeformationJacobian": ("CTE",),
    "SwellingAndPhaseChangeDeformationJacobian": ("phase_fraction",),
    # plasticity library
    "YieldFunction": ("yield_stress",),
    "GTNYieldFunction": ("yield_stress", "q1", "q2", "q3"),
    "PerzynaPlasticFlowRate": ("reference_stress", "exponent"),
    "LinearIsotropicHardening": ("hardening_modulus",),
    "VoceIsotropicHardening": ("saturated_hardening", "saturation_rate"),
    "LinearKinematicHardening": ("hardening_modulus",),
    "FredrickArmstrongPlasticHardening": ("C", "g"),
    "ChabochePlasticHardening": ("C", "g", "A", "a"),
    "SlopeSaturationVoceIsotropicHardening": ("saturated_hardening", "initial_hardening_rate"),
    "PowerLawIsotropicHardeningStaticRecovery": ("tau", "n"),
    "PowerLawKinematicHardeningStaticRecovery": ("tau", "n"),
    "OlevskySinteringStress": ("surface_tension", "particle_radius"),
    "LinearIsotropicElasticJ2TrialStressUpdate": ("coefficients",),
    "KocksMeckingActivationEnergy": ("shear_modulus",),
    "KocksMeckingFlowSwitch": ("g0",),
    "KocksMeckingFlowViscosity": ("A", "B", "shear_modulus"),
    "KocksMeckingRateSensitivity": ("A", "shear_modulus"),
    "KocksMeckingIntercept": ("A", "B", "C"),
    "KocksMeckingYieldStress": ("C", "shear_modulus"),
    # viscoelasticity
    "LinearDashpot": ("viscosity",),
    "KelvinVoigtElement": ("modulus", "viscosity"),
    "ZenerElement": ("equilibrium_modulus", "maxwell_modulus", "maxwell_viscosity"),
    "BurgersElement": (
        "maxwell_modulus",
        "maxwell_viscosity",
        "kelvin_modulus",
        "kelvin_viscosity",
    ),
    "WiechertElement": (
        "equilibrium_modulus",
        "modulus_1",
        "viscosity_1",
        "modulus_2",
        "viscosity_2",
    ),
    # cohesive zones
    "BilinearTraction": ("critical_separation", "full_separation"),
    "CamanhoDavilaCriticalSeparation": ("mode_mixity",),
    "BenzeggaghKenaneFullSeparation": ("mode_mixity", "critical_separation"),
    "PowerLawFullSeparation": ("mode_mixity", "critical_separation"),
    # crystal plasticity
    "SingleSlipStrengthMap": ("constant_strength",),
    "DislocationObstacleStrengthMap": ("constant_strength", "alpha", "mu", "b"),
    "PowerLawSlipRule": ("gamma0", "n"),
    "VoceSingleSlipHardeningRule": ("initial_slope", "saturated_hardening"),
    "LinearSingleSlipHardeningRule": ("hardening_slope",),
    "PerSlipForestDislocationEvolution": ("k1", "k2"),
}

#: Options whose parameter is not one Scalar: the number of components of its value.
_SIZES = {"elastic_stiffness_tensor": 36}


@dataclasses.dataclass(frozen=True)
class Coupling:
    """One word of a parameter option that names a variable (or a model's output)."""

    key: str  #: the option
    index: int  #: the word's position in the option's value
    variable: str  #: the input variable the parameter becomes
    provider: str | None = None  #: the [Models] block that computes it, if any
    shape: tuple[int, ...] | None = None  #: the shape of the provider's output


#: A variable or model name: a letter or underscore first (so ``0,3`` is a mistyped number).
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_~:/\-]*")
#: The blocks whose coupled parameters are being resolved, to report a cycle.
_RESOLVING: list[str] = []


def couplings(section: Section) -> list[Coupling]:
    """The words of ``section``'s couplable options that name a variable or a model."""
    found: list[Coupling] = []
    for key in COUPLABLE.get(section.string("type"), ()):
        if key not in section.params:
            continue
        for index, word in enumerate(section.strings(key)):
            if _NUMBER.fullmatch(word) or _is_tensor(section, word):
                continue
            found.append(Coupling(key, index, *_resolve(section, key, word)))
    return found


def _is_tensor(section: Section, word: str) -> bool:
    root = section
    while root.parent is not None:
        root = root.parent
    tensors = root.child("Tensors")
    return tensors is not None and tensors.child(word) is not None


def _resolve(
    section: Section, key: str, word: str
) -> tuple[str, str | None, tuple[int, ...] | None]:
    """(variable, provider block, its shape) of a word that is not a value: ``model``,
    ``model.output`` or a bare variable name."""
    models = section.parent
    assert models is not None
    name, _, output = word.partition(".")
    names = (name, output) if output else (name,)
    if "." in output or not all(_NAME.fullmatch(n) for n in names):
        raise section.error(key, f"parameter '{key}': expected a number, got '{word}'")
    if output and models.child(name) is None:
        raise section.error(
            key,
            f"parameter '{key}': expected a number, got '{word}' (nor is it a [Tensors] "
            f"name, a variable name or 'model.output' of a block in [{models.full_name}])",
        )
    if name == section.name:
        raise section.error(key, f"parameter '{key}': '{word}' names this model itself")
    provider = models.child(name)
    if provider is None:
        return word, None, None
    if provider.full_name in _RESOLVING:
        chain = " -> ".join([*_RESOLVING, provider.full_name])
        raise section.error(key, f"parameter '{key}': models give each other parameters: {chain}")
    _RESOLVING.append(section.full_name)
    try:
        shapes = {v.name: v.shape for v in build_model(provider).outputs}
    finally:
        _RESOLVING.pop()
    outputs = list(shapes)
    if output:
        if output not in outputs:
            raise section.error(
                key,
                f"parameter '{key}': model '{name}' has no output '{output}'; "
                f"outputs: {', '.join(outputs)}",
            )
        return output, name, shapes[output]
    if len(outputs) != 1:
        raise section.error(
            key,
            f"parameter '{key}': model '{name}' has {len(outputs)} outputs "
            f"({', '.join(outputs)}); name one as '{name}.<output>'",
        )
    return outputs[0], name, shapes[outputs[0]]


def parameter_name(section: Section, coupling: Coupling) -> str:
    """The parameter a coupled word sets: ``<block>.<option>``, or for a word of
    ``coefficients`` ``<block>.<symbol>`` of the matching ``coefficient_types``."""
    if coupling.key == "coefficients":
        types = section.strings("coefficient_types")
        return f"{section.name}.{COEFFICIENT_SYMBOLS[types[coupling.index]]}"
    return f"{section.name}.{coupling.key}"


def build_coupled(cls: type[Model], section: Section, found: Sequence[Coupling]) -> Model:
    """The model of ``section`` with the parameters of ``found`` coupled to variables."""
    params = dict(section.params)
    for key in {c.key for c in found}:
        words = section.strings(key)
        for c in found:
            if c.key == key:
                words[c.index] = " ".join(["1"] * _SIZES.get(key, 1))
        params[key] = Value(" ".join(words), section.params[key].line, True)
    inner = cls.from_hit(dataclasses.replace(section, params=params))
    if inner.implicit:
        raise section.error(
            found[0].key,
            f"parameter '{found[0].key}': a {inner.type_name} cannot take a parameter from a "
            "variable",
        )
    coupled: dict[str, str] = {}
    outputs = {v.name for v in inner.outputs}
    inputs = {v.name: v for v in inner.inputs}
    for c in found:
        name = parameter_name(section, c)
        assert name in inner.parameters, f"{name} is not a parameter of {inner.type_name}"
        shape = tuple(inner.parameters[name].shape)
        if c.variable in outputs:
            raise section.error(
                c.key, f"parameter '{c.key}': '{c.variable}' is an output of this model"
            )
        given = inputs[c.variable].shape if c.variable in inputs else c.shape
        if given is not None and given != shape:
            raise section.error(
                c.key,
                f"parameter '{c.key}': variable '{c.variable}' has shape {given} but the "
                f"parameter has shape {shape}",
            )
        coupled[name] = c.variable
    providers = list(dict.fromkeys(c.provider for c in found if c.provider is not None))
    return CoupledParameters(inner, coupled, providers)


class CoupledParameters(Model):
    """``inner`` with the parameters ``coupled`` (parameter -> variable name) taken from
    input variables, one value per point; ``providers`` are the [Models] blocks that
    compute some of those variables (a ``ComposedModel`` brings them in)."""

    def __init__(self, inner: Model, coupled: Mapping[str, str], providers: Sequence[str]) -> None:
        self.inner = inner
        self.coupled = dict(coupled)
        self.providers = list(providers)
        inputs = list(inner.inputs)
        for param, var in self.coupled.items():
            if var not in {v.name for v in inputs}:
                inputs.append(Variable(var, tuple(inner.parameters[param].shape)))
        params = {k: v for k, v in inner.parameters.items() if k not in self.coupled}
        super().__init__(inner.name, inputs, inner.outputs, params)
        self.type_name = inner.type_name  # type: ignore[misc]
        self._placeholders = {k: inner.parameters[k] for k in self.coupled}

    def solver_users(self) -> list[Model]:
        return self.inner.solver_users()

    def with_sub_batch(self, subs: Mapping[str, tuple[int, ...]]) -> Model:
        """Sub-batch axes of the wrapped model's own inputs go to the wrapped model (the
        coupled variables stay one value per point); axes on a coupled variable make each
        sub-batch entry one more point."""
        if any(subs.get(v) for v in self.coupled.values()):
            return super().with_sub_batch(subs)
        own = {v.name: subs[v.name] for v in self.inner.inputs if subs.get(v.name)}
        inner = self.inner.with_sub_batch(own)
        if inner is self.inner:
            return self
        return CoupledParameters(inner, self.coupled, self.providers)

    def to(self, device: torch.device | str) -> Model:
        self.inner.to(device)
        return super().to(device)

    def evaluate(
        self,
        x: Mapping[str, torch.Tensor],
        p: Mapping[str, torch.Tensor],
        jacobian: bool = False,
        param_jacobian: bool = False,
    ) -> Evaluation:
        inner = self.inner
        own = {v.name: x[v.name] for v in inner.inputs}
        values = {q: x[var] for q, var in self.coupled.items()}
        fixed = {k: v for k, v in p.items() if k not in self.coupled}
        wanted = jacobian or param_jacobian
        ev = each_point(inner, own, values, fixed, jacobian, wanted, self._placeholders)
        outs, jac, pjac = ev.outputs, ev.jacobian, ev.param_jacobian
        result = Evaluation(outs)
        if jacobian:
            result.jacobian = {o: dict(jac[o]) for o in jac}
            for o in result.jacobian:
                for q, var in self.coupled.items():
                    block = pjac[o][q]
                    row = result.jacobian[o]
                    row[var] = row[var] + block if var in row else block
        if param_jacobian:
            result.param_jacobian = {o: {q: pjac[o][q] for q in self.parameters} for o in pjac}
        return result


def coupled_leaves(model: Model) -> list[CoupledParameters]:
    """The models inside ``model`` (itself, members of a composition, wrapped models)
    whose parameters are given as variables."""
    if isinstance(model, CoupledParameters):
        return [model]
    members = getattr(model, "models", None)
    if isinstance(members, list):
        return [leaf for member in members for leaf in coupled_leaves(member)]
    inner = getattr(model, "inner", None)
    return coupled_leaves(inner) if isinstance(inner, Model) else []
