"""Plasticity types (hardening rules, porous plasticity, Kocks-Mecking, annealing) against
NEML2 3.1.0.

Every file of tests/neml2_inputs/plasticity except the composed models and the GTN
models with Normality (test_gtn_oracle.py) is evaluated by NEML2 (one oracle process for
the module) and by our eager model at a few points covering each branch; values and
Jacobians agree at rtol 1e-8. The parameter
Jacobians, which NEML2 does not report, are checked against central differences of our
forward. The composed models are driven over 24 time steps, each step starting from the
state the previous one left, and compared with NEML2 driven the same way at every step.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
import torch

from neml2 import hit
from neml2.errors import HitError
from neml2.models import Model, build_model
from neml2.models.base import raise_if_failed

from .oracle import (  # noqa: F401
    Case,
    answers,
    check,
    oracle_folder,
    parameter_jacobian_by_differences,
)
from .test_neml2_oracle import (
    INPUTS,
    assert_agree,
    strain_path,
)

PLASTICITY = INPUTS / "plasticity"
F64 = torch.float64


def t(*values: float) -> torch.Tensor:
    """A batch of scalars."""
    return torch.tensor(values, dtype=F64)


def sr2(seed: int, batch: int, scale: float = 1.0) -> torch.Tensor:
    """A batch of Mandel vectors, reproducible."""
    g = torch.Generator().manual_seed(seed)
    return scale * torch.randn(batch, 6, generator=g, dtype=F64)


def with_zero(a: torch.Tensor) -> torch.Tensor:
    """``a`` with its second point zero (a regularised norm at the origin)."""
    a = a.clone()
    a[1] = 0.0
    return a


def f(name: str) -> Path:
    return PLASTICITY / name


CASES = [
    Case(
        f("chaboche_plastic_hardening.i"),
        {
            "flow_rate": t(0.0, 0.3, 1.2, 2e-3, 0.7),
            "flow_direction": sr2(1, 5),
            "X1": with_zero(sr2(2, 5, 80.0)),
        },
    ),
    Case(
        f("slope_saturation_voce.i"),
        {"gamma_dot": t(0.0, 0.2, 1.5, 3e-2, 0.9), "k": t(0.0, 40.0, 119.0, 150.0, -20.0)},
    ),
    Case(
        f("slope_saturation_voce_negative.i"),
        {
            "flow_rate": t(0.0, 0.4, 1.1, 0.05),
            "isotropic_hardening": t(0.0, -30.0, -90.0, 10.0),
        },
    ),
    Case(
        f("power_law_isotropic_recovery.i"),
        {"isotropic_hardening": t(0.0, 35.0, -60.0, 250.0, 410.0)},
    ),
    Case(f("power_law_kinematic_recovery.i"), {"X": with_zero(sr2(3, 5, 120.0))}),
    Case(
        f("gtn_yield_function.i"),
        {
            "flow_invariant": t(0.0, 120.0, 200.0, 80.0, 150.0),
            "poro_invariant": t(-300.0, 0.0, 150.0, 420.0, -60.0),
            "void_fraction": t(0.05, 0.0, 0.1, 0.2, 0.01),
            "k": t(0.0, 10.0, 45.0, 5.0, 80.0),
        },
    ),
    Case(
        f("gtn_yield_function_renamed.i"),
        {
            "se": t(0.0, 120.0, 200.0, 80.0, 150.0),
            "sp": t(-300.0, 0.0, 150.0, 420.0, -60.0),
            "phi": t(0.05, 0.0, 0.1, 0.2, 0.01),
            "k": t(0.0, 10.0, 45.0, 5.0, 80.0),
        },
    ),
    Case(
        f("gtn_yield_function_defaults.i"),
        {
            "flow_invariant": t(50.0, 100.0, 0.0, 130.0),
            "poro_invariant": t(200.0, -80.0, 40.0, 0.0),
            "void_fraction": t(0.02, 0.15, 0.3, 0.0),
        },
    ),
    Case(
        f("gurson_cavitation.i"),
        {"Ep_dot": sr2(4, 4, 1e-3), "void_fraction": t(0.0, 0.05, 0.2, 0.6)},
    ),
    Case(f("olevsky_sintering_stress.i"), {"phi": t(0.0, 0.05, 0.2, 0.45)}),
    Case(
        f("km_activation_energy.i"),
        {"temperature": t(300.0, 650.0, 900.0, 1200.0), "eps_dot": t(1e-5, 1e-3, 1.0, 1e2)},
    ),
    # activation energies below, at and above g0
    Case(
        f("km_flow_switch.i"),
        {
            "activation_energy": t(0.1, 0.55, 0.6, 0.7, 1.5),
            "ri": t(1e-3, 2e-2, 0.5, 0.0, 3e-3),
            "rd": t(5e-3, 1e-4, 0.1, 2e-2, 0.0),
        },
    ),
    Case(
        f("km_flow_switch_defaults.i"),
        {
            "activation_energy": t(-0.5, 0.45, 2.0),
            "rate_independent_flow_rate": t(0.3, 0.1, 0.2),
            "rate_dependent_flow_rate": t(0.05, 0.6, 0.01),
        },
    ),
    Case(f("km_flow_viscosity.i"), {"T": t(300.0, 600.0, 900.0, 1250.0)}),
    Case(f("km_flow_viscosity_named.i"), {"temperature": t(400.0, 800.0, 1100.0)}),
    Case(f("km_rate_sensitivity.i"), {"temperature": t(300.0, 700.0, 1300.0)}),
    Case(f("km_intercept.i")),
    Case(f("km_yield_stress.i")),
    Case(
        f("j2_trial_stress_update.i"),
        {
            "s_trial": t(250.0, 400.0, 90.0, 0.0),
            "ep": t(0.0, 2e-3, 1e-2, 5e-4),
            "ep~1": t(0.0, 1e-3, 4e-3, 5e-4),
        },
    ),
    # below T1, between T1 and T2 and above T2 (away from both: NEML2 gives values only,
    # and ours are checked by differences; sr2_annealing covers T = T1 and T = T2)
    Case(
        f("scalar_annealing.i"),
        {
            "k_rate": t(10.0, -4.0, 7.0, 2.5, 30.0),
            "k": t(50.0, 20.0, -15.0, 80.0, 100.0),
            "T": t(300.0, 599.0, 750.0, 901.0, 1000.0),
        },
    ),
    # below T1, at T1, between, at T2 and above T2
    Case(
        f("sr2_annealing.i"),
        {
            "base_rate": sr2(5, 5, 10.0),
            "base": sr2(6, 5, 50.0),
            "temperature": t(400.0, 500.0, 650.0, 700.0, 850.0),
        },
    ),
]


#: Cases whose Jacobian NEML2 3.1.0 fails to build (a TypeError assembling the blocks of
#: ScalarTwoStageThermalAnnealing): its values are compared, ours checked by differences.
VALUES_ONLY = ("scalar_annealing",)
#: Cases NEML2 3.1.0 refuses, and what it raises.
REFUSED = {"gtn_yield_function_renamed": "KeyError: 'flow_invariant'"}


@pytest.fixture(scope="module")
def theirs(oracle_folder):  # noqa: F811 (the fixture imported above)
    composed = [case for name in sorted(COMPOSED) for case in step_cases(name)]
    return answers(oracle_folder, CASES + composed)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c.id for c in CASES])
def test_agrees_with_neml2(index: int, theirs: list[dict]) -> None:
    case = CASES[index]
    if case.id in REFUSED:
        # NEML2 3.1.0 refuses this file; ours agrees with its twin that NEML2 evaluates
        assert REFUSED[case.id] in theirs[index].get("error", ""), theirs[index]
        twin = CASES[[c.id for c in CASES].index(case.id.removesuffix("_renamed"))]
        ours, same = case.build().jacobian(case.inputs), twin.build().jacobian(twin.inputs)
        renamed = dict(zip(case.inputs, twin.inputs, strict=True))
        assert_agree(
            {renamed[k]: v for k, v in ours["yield_function"].items()},
            same["yield_function"],
            case.id,
        )
        return
    # NEML2's Jacobian is compared wherever NEML2 computes one
    assert ("jacobian_error" in theirs[index]) == (case.id in VALUES_ONLY), case.id
    check(case, theirs[index])


@pytest.mark.parametrize(
    "index",
    [i for i, c in enumerate(CASES) if c.build().parameters],
    ids=[c.id for c in CASES if c.build().parameters],
)
def test_parameter_jacobian_by_differences(index: int) -> None:
    case = CASES[index]
    # off the steps of the annealing switches, where a parameter moves the output by jumps
    x = {k: v + 0.0123 * (1.0 + v.abs()) for k, v in case.inputs.items()}
    parameter_jacobian_by_differences(case.build(), x, case.id)


def export_kernels(model: Model, inputs: Mapping[str, torch.Tensor]) -> None:
    """The model's Jacobian graphs export (torch.export, dynamic batch, every parameter a
    graph input) and the exported graph gives what the eager one does."""
    from neml2.compile import Graph, Selection

    pairs = [(o.name, i.name) for o in model.outputs for i in model.inputs]
    sel = Selection(pairs, list(model.parameters))
    for graph in ("jacobian", "param_jacobian") if sel.params else ("jacobian",):
        module = Graph(model, graph, sel)
        batch = torch.export.Dim("batch", min=0)
        shapes = tuple({0: batch} if s["role"] == "input" else None for s in module.args)
        args = tuple(
            inputs[s["name"]] if s["role"] == "input" else model.parameters[s["name"]]
            for s in module.args
        )
        program = torch.export.export(module, args, dynamic_shapes=(shapes,), strict=False)
        exported, eager = program.module()(*args), module(*args)
        for a, b in zip(exported, eager, strict=True):
            torch.testing.assert_close(a, b, rtol=1e-12, atol=0.0)


#: One case per type with inputs (the others have no batch to export over).
TWINS = (
    "slope_saturation_voce_negative",
    "gtn_yield_function_defaults",
    "gtn_yield_function_renamed",
    "km_flow_switch_defaults",
    "km_flow_viscosity_named",
)
BATCHED = [i for i, c in enumerate(CASES) if c.inputs and c.id not in TWINS]


@pytest.mark.parametrize("index", BATCHED, ids=[CASES[i].id for i in BATCHED])
def test_kernels_export(index: int) -> None:
    case = CASES[index]
    export_kernels(case.build(), case.inputs)


# --- composed models over steps -------------------------------------------------------

#: Steps each composed model is driven over, and the points of ``strain_path`` it takes
#: (NEML2 3.1.0 solves each point of each step apart, at about 0.3 s a solve and more
#: for the retries its layout fault costs, so one point keeps the module quick).
DRIVEN_STEPS = 20
POINTS = [4]


def build(name: str) -> Model:
    return build_model(hit.load(PLASTICITY / name).children["Models"].children["model"])


def drive_state(
    model: Model, state: dict[str, torch.Tensor], given: Callable[[int], dict[str, torch.Tensor]]
) -> tuple[list[dict[str, torch.Tensor]], list[dict], list[dict]]:
    """DRIVEN_STEPS steps of our eager model from ``state`` (the internal variables, each
    given as ``<name>~1`` of the next step): the inputs, outputs and Jacobians of each."""
    steps, outputs, jacobians = [], [], []
    n = len(POINTS)
    for step in range(1, DRIVEN_STEPS + 1):
        x = {
            **given(step),
            "t": torch.full((n,), 0.5 * step, dtype=F64),
            "t~1": torch.full((n,), 0.5 * (step - 1), dtype=F64),
            **{f"{k}~1": v for k, v in state.items()},
        }
        # one solve for the outputs and the Jacobian (the inputs are batched already)
        ev = model.evaluate(x, model.parameters, jacobian=True)
        raise_if_failed(model.name, ev.status)
        out, jac = ev.outputs, ev.jacobian
        assert all(b.shape[0] == n for row in jac.values() for b in row.values())
        steps.append(x)
        outputs.append(out)
        jacobians.append(jac)
        state = {k: out[k] for k in state}
    return steps, outputs, jacobians


def zeros(*shape: int) -> torch.Tensor:
    return torch.zeros((len(POINTS), *shape), dtype=F64)


def strain(step: int) -> dict[str, torch.Tensor]:
    """The strain of ``strain_path`` (a ramp with shear, then partial unloading) at POINTS."""
    return {"strain": strain_path(step)[POINTS]}


@functools.cache
def composed_run(name: str) -> tuple[list[dict], list[dict], list[dict]]:
    """Our eager drive of a composed file from a zero state."""
    model = build(name)
    assert model.implicit
    state = {"plastic_strain": zeros(6)}
    state.update(COMPOSED[name])
    return drive_state(model, state, strain)


#: The composed files and their internal variables besides the plastic strain.
COMPOSED: dict[str, dict[str, torch.Tensor]] = {
    "chaboche_viscoplastic.i": {"X1": zeros(6), "X2": zeros(6), "k": zeros()},
}


def step_cases(name: str) -> list[Case]:
    """One oracle case per step, each point given to NEML2 as a batch of one: NEML2
    3.1.0's eager Newton solve raises IndexError on SR2 unknowns at an unbatched point."""
    steps, _, _ = composed_run(name)
    return [Case(f(name), {k: v.unsqueeze(1) for k, v in x.items()}) for x in steps]


def squeeze_points(value: object) -> object:
    """NEML2's answer for points given as batches of one, without that axis."""
    if isinstance(value, dict):
        return {k: squeeze_points(v) for k, v in value.items()}
    assert isinstance(value, torch.Tensor)
    assert value.shape[1] == 1
    return value.squeeze(1)


def compare_steps(name: str, theirs: list[dict]) -> None:
    """Our drive of ``name`` agrees with NEML2's answers at every step."""
    _, outputs, jacobians = composed_run(name)
    assert len(outputs) == len(theirs) == DRIVEN_STEPS >= 20
    for step, (out, jac, ref) in enumerate(zip(outputs, jacobians, theirs, strict=True)):
        assert "error" not in ref, f"NEML2 refused {name} step {step + 1}: {ref['error']}"
        assert_agree(out, squeeze_points(ref["outputs"]), f"{name} step {step + 1} outputs")
        ref_jac = squeeze_points(ref["jacobian"])
        assert_agree(jac, ref_jac, f"{name} step {step + 1} jacobian")


def composed_answers(name: str, theirs: list[dict]) -> list[dict]:
    """NEML2's answers to the steps of ``name`` (after CASES in the module's request)."""
    first = len(CASES) + sum(DRIVEN_STEPS for n in COMPOSED if n < name)
    return theirs[first : first + DRIVEN_STEPS]


def test_chaboche_over_steps_agrees_with_neml2(theirs: list[dict]) -> None:
    name = "chaboche_viscoplastic.i"
    _, outputs, _ = composed_run(name)
    # the path yields, the back stresses grow and recover, and the last steps unload
    assert float(outputs[-1]["k"].min()) > 1.0
    assert float(outputs[13]["X1"].abs().max()) > 10.0
    compare_steps(name, composed_answers(name, theirs))


def build_text(text: str) -> Model:
    return build_model(hit.parse(text, "f.i").children["Models"].children["model"])


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("type = ChabochePlasticHardening\n C = 1\n g = 1\n A = 1", "'a'"),
        ("type = PowerLawKinematicHardeningStaticRecovery\n tau = 1\n n = 2\n m = 1", "unknown"),
    ],
)
def test_refuses(body: str, message: str) -> None:
    with pytest.raises(HitError, match=message):
        build_text(f"[Models]\n [model]\n {body}\n []\n[]\n")
