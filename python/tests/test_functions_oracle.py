"""Scalar functions, SR2 invariants and interpolations against NEML2 3.1.0.

Every file of tests/neml2_inputs/functions is evaluated by NEML2 (one oracle process for
the module) and by our eager model at several points, covering each branch (both sides
of a kink, the kink itself, each option value, queries below, inside and above a
table); values and Jacobians agree at rtol 1e-8. The parameter Jacobians, which NEML2
does not report, are checked against central differences of our forward.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest
import torch

from neml2 import hit
from neml2.errors import HitError
from neml2.models import Model, build_model

from .oracle import (  # noqa: F401
    Case,
    answers,
    check,
    oracle_folder,
    parameter_jacobian_by_differences,
)
from .test_neml2_oracle import INPUTS

FUNCTIONS = INPUTS / "functions"
F64 = torch.float64
#: The cases whose Jacobian NEML2 3.1.0 fails to compute (checked by differences instead).
VALUES_ONLY = ("scalar_bilinear_interpolation_3x4",)


def t(*values: float) -> torch.Tensor:
    """A batch of scalars."""
    return torch.tensor(values, dtype=F64)


def sr2(seed: int, batch: int, scale: float = 1.0) -> torch.Tensor:
    """A batch of Mandel vectors, reproducible."""
    g = torch.Generator().manual_seed(seed)
    return scale * torch.randn(batch, 6, generator=g, dtype=F64)


def invariant_inputs() -> torch.Tensor:
    """General tensors, a zero one and a hydrostatic one (a zero deviator)."""
    a = sr2(3, 6, 50.0)
    a[1] = 0.0
    a[4, :3], a[4, 3:] = 7.0, 0.0
    return a


def control() -> torch.Tensor:
    """Control signals on both sides of 0.5 and of 0.2, and at each threshold."""
    c = torch.zeros(5, 6, dtype=F64)
    c[0] = t(1, 0, 0, 0, 0, 0)
    c[1] = t(1, 1, 1, 0, 0, 0)
    c[2] = t(0.5, 0.2, 0.7, 0.1, 1.0, 0.3)
    c[3] = t(0, 1, 0, 1, 0, 1)
    c[4] = t(0.25, 0.5, 0.19, 0.21, 0.6, 0.0)
    return c


def f(name: str) -> object:
    return FUNCTIONS / name


CASES = [
    Case(
        f("scalar_pnorm.i"),
        {
            "a": t(1.5, -2.0, 0.0, 0.3, -0.7),
            "b": t(-0.5, 0.0, 2.5, 1.1, 3.0),
            "c": t(2.0, 1.0, -1.5, 0.0, -0.2),
        },
    ),
    Case(f("scalar_pnorm_defaults.i"), {"x": t(3.0, -1.0, 0.0, 0.2), "y": t(4.0, 2.0, -5.0, 0.0)}),
    Case(
        f("scalar_pnorm_one_weight.i"),
        {
            "p": t(1.0, -2.0, 0.5, 0.0),
            "q": t(0.0, 3.0, -0.25, 1.5),
            "r": t(2.0, -0.1, 4.0, 0.7),
        },
    ),
    Case(f("macaulay_split.i"), {"f": t(-3.0, -0.5, 0.0, 0.25, 4.0)}),
    Case(f("macaulay_split_defaults.i"), {"from": t(2.0, -1e-3, 0.0, -7.5)}),
    Case(
        f("fb_complementarity.i"),
        {
            "f": t(-1.0, 0.0, -0.5, 2.0, 0.0, 1.5),
            "dgamma": t(0.0, 0.3, 0.2, -1.0, 0.0, 0.4),
        },
    ),
    Case(
        f("fb_complementarity_ge_le.i"),
        {"a": t(1.0, 0.0, -2.0, 0.5, 3.0), "b": t(0.0, -0.4, 1.0, -0.5, 2.0)},
    ),
    Case(
        f("fb_complementarity_ge_ge.i"),
        {"a": t(1.0, 0.0, -2.0, 0.5), "b": t(0.0, 0.4, 1.0, -0.5)},
    ),
    Case(
        f("irreversible_scalar.i"),
        {"d_trial": t(0.2, 0.5, 0.3, 0.0, 0.9), "d~1": t(0.3, 0.1, 0.3, 0.0, 0.2)},
    ),
    Case(
        f("irreversible_scalar_defaults.i"),
        {"from": t(-1.0, 2.0, 1.0, 0.5), "to~1": t(0.0, 1.0, 1.5, -0.5)},
    ),
    Case(f("arrhenius_parameter.i"), {"T": t(300.0, 450.0, 600.0, 900.0, 1200.0)}),
    Case(f("arrhenius_parameter_named.i"), {"temperature": t(250.0, 400.0, 800.0, 1500.0)}),
    Case(
        f("mixed_control_setup.i"),
        {"control": control(), "x_above": sr2(1, 5), "x_below": sr2(2, 5, 1e-2)},
    ),
    Case(
        f("mixed_control_setup_threshold.i"),
        {"ctrl": control(), "stress": sr2(4, 5, 100.0), "strain": sr2(5, 5, 1e-3)},
    ),
    Case(f("sr2_invariant_vonmises.i"), {"A": invariant_inputs()}),
    Case(f("sr2_invariant_effective_strain.i"), {"A": invariant_inputs() * 1e-4}),
    Case(f("sr2_invariant_i1.i"), {"A": invariant_inputs()}),
    Case(f("hermite_smooth_step.i"), {"T": t(250.0, 300.0, 350.0, 400.0, 499.0, 600.0)}),
    Case(f("hermite_smooth_step_complement.i"), {"argument": t(-2.0, -1.0, 0.0, 0.5, 1.9, 3.0)}),
    Case(f("symmetric_hermite_interpolation.i"), {"phi": t(0.0, 0.1, 0.3, 0.5, 0.7, 0.95)}),
    Case(f("symmetric_hermite_interpolation_named.i"), {"argument": t(-3.0, -1.0, 0.4, 1.2, 2.9)}),
    Case(f("scalar_linear_interpolation.i"), {"T": t(250.0, 300.0, 349.0, 420.0, 600.0, 700.0)}),
    Case(f("scalar_linear_interpolation_named.i"), {"argument": t(-2.0, -1.0, 0.3, 2.0, 3.5)}),
    *(
        Case(
            f(f"{kind}_bilinear_interpolation.i"),
            {
                "temperature": t(-0.5, 0.0, 0.7, 1.0, 2.5, 3.5),
                "strain_rate": t(-2.0, 0.5, 1.0, 3.9, 4.5, 2.0),
            },
        )
        for kind in ("scalar", "vec", "sr2")
    ),
    # NEML2 3.1.0 computes this grid's values but not its Jacobian (it broadcasts the two
    # abscissae, of 3 and 4 points, as batch axes): ours is checked by differences, away
    # from the knots, and at the knots by the square grids above
    Case(
        f("scalar_bilinear_interpolation_3x4.i"),
        {
            "temperature": t(-0.5, 0.3, 0.7, 1.2, 2.5, 3.5),
            "strain_rate": t(-2.0, 0.2, 1.1, 3.9, 4.5, 2.7),
        },
    ),
    Case(
        f("sr2_bilinear_interpolation_named.i"),
        {"argument1": t(0.5, 1.0, 1.5, 2.0, 2.5), "argument2": t(-1.0, 0.0, 2.5, 5.0, 7.0)},
    ),
]


@pytest.fixture(scope="module")
def theirs(oracle_folder):  # noqa: F811 (the fixture imported above)
    return answers(oracle_folder, CASES)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c.id for c in CASES])
def test_agrees_with_neml2(index: int, theirs: list[dict]) -> None:
    case = CASES[index]
    # NEML2's Jacobian is compared wherever NEML2 computes one
    assert ("jacobian_error" in theirs[index]) == (case.id in VALUES_ONLY), case.id
    check(case, theirs[index])


def off_kinks(x: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The inputs moved off every knot and kink of the cases (for differences)."""
    return {k: v + 0.01237 * (1.0 + v.abs()) for k, v in x.items()}


@pytest.mark.parametrize(
    "index",
    [i for i, c in enumerate(CASES) if c.build().parameters],
    ids=[c.id for c in CASES if c.build().parameters],
)
def test_parameter_jacobian_by_differences(index: int) -> None:
    case = CASES[index]
    model = case.build()
    parameter_jacobian_by_differences(model, off_kinks(case.inputs), case.id)


def build(text: str) -> Model:
    return build_model(hit.parse(text, "f.i").children["Models"].children["model"])


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("type = SR2Invariant\n invariant_type = I2\n tensor = A\n invariant = a", "I2"),
        ("type = SR2Invariant\n tensor = A\n invariant = a", "invariant_type"),
        ("type = FBComplementarity\n a_inequality = EQ", "LE or GE"),
        ("type = ScalarPNorm\n from = 'a b c'\n exponent = 2\n weights = '1 2'", r"3 \(or 1\)"),
        ("type = ArrheniusParameter\n reference_value = 1\n activation_energy = 2", "ideal_gas"),
        ("type = IrreversibleScalar\n to_old = x", "unknown parameter"),
    ],
)
def test_refuses(body: str, message: str) -> None:
    with pytest.raises(HitError, match=message):
        build(f"[Models]\n [model]\n {body}\n []\n[]\n")


#: One file per type: its kernels must export (torch.export with a dynamic batch), the
#: step before AOTInductor, with every parameter a graph input.
EXPORTED = (
    "scalar_pnorm",
    "macaulay_split",
    "fb_complementarity",
    "irreversible_scalar",
    "arrhenius_parameter",
    "mixed_control_setup",
    "sr2_invariant_vonmises",
    "sr2_invariant_i1",
    "hermite_smooth_step",
    "symmetric_hermite_interpolation",
    "scalar_linear_interpolation",
    "vec_bilinear_interpolation",
    "sr2_bilinear_interpolation",
)


@pytest.mark.parametrize("name", EXPORTED)
def test_kernels_export(name: str) -> None:
    from neml2.compile import Graph, Selection

    case = next(c for c in CASES if c.id == name)
    model = case.build()
    pairs = [(o.name, i.name) for o in model.outputs for i in model.inputs]
    sel = Selection(pairs, list(model.parameters))
    for graph in ("jacobian", "param_jacobian") if sel.params else ("jacobian",):
        module = Graph(model, graph, sel)
        batch = torch.export.Dim("batch", min=0)
        shapes = tuple({0: batch} if s["role"] == "input" else None for s in module.args)
        args = tuple(
            case.inputs[s["name"]] if s["role"] == "input" else model.parameters[s["name"]]
            for s in module.args
        )
        program = torch.export.export(module, args, dynamic_shapes=(shapes,), strict=False)
        exported, eager = program.module()(*args), module(*args)
        for a, b in zip(exported, eager, strict=True):
            torch.testing.assert_close(a, b, rtol=1e-12, atol=0.0)
