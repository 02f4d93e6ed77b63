"""Porous flow against NEML2 3.1.0: effective saturation, capillary pressure (Brooks-Corey,
van Genuchten, with and without the logarithmic extension), the porosity-permeability
laws and the advective stress.

Every file of tests/neml2_inputs/porous_flow is evaluated by NEML2 (one oracle process
for the module) and by our eager model at points chosen for each branch: saturations
below the residual and above the maximum fraction, on both sides of the transition
saturation (and at it), at and beyond full saturation (van Genuchten's clamp), porosities
below and above the reference. Values and Jacobians agree at rtol 1e-8. Where a variable
gives a parameter NEML2 3.1.0 computes the values but not the Jacobian (the coupled
column is missing), and it cannot evaluate AdvectiveStress with a coupled coefficient at
all: those Jacobians are checked by central differences. The parameter Jacobians, which
NEML2 does not report, are checked against central differences of our forward.
``composed.i`` chains the family (saturation, capillary pressure, permeability, swelling
and thermal Jacobians into the advective stress) and agrees with NEML2 too.
"""

from __future__ import annotations

import pytest
import torch

from neml2 import hit
from neml2.errors import HitError
from neml2.models import Model, build_model

from .oracle import (  # noqa: F401
    Case,
    answers,
    check,
    check_by_differences,
    oracle_folder,
    parameter_jacobian_by_differences,
)
from .test_neml2_oracle import INPUTS
from .test_viscoelasticity_oracle import exports

FOLDER = INPUTS / "porous_flow"
F64 = torch.float64


def t(*values: float) -> torch.Tensor:
    """A batch of scalars."""
    return torch.tensor(values, dtype=F64)


def r2(seed: int, scale: float, n: int, identity: bool = False) -> torch.Tensor:
    """A batch of ``n`` full 3x3 tensors, reproducible (about the identity where asked)."""
    g = torch.Generator().manual_seed(seed)
    value = scale * torch.randn(n, 3, 3, generator=g, dtype=F64)
    return value + torch.eye(3, dtype=F64) if identity else value


def f(name: str) -> object:
    return FOLDER / name


CASES = [
    # below the residual saturation (Se < 0), between, at and above the maximum (Se > 1)
    Case(f("effective_saturation.i"), {"fluid_fraction": t(0.05, 0.1, 0.4, 0.85, 0.9)}),
    Case(
        f("effective_saturation_named.i"),
        {"phi_f": t(0.02, 0.3, 0.5, 0.7), "phi_max": t(0.6, 0.9, 0.5, 0.65)},
    ),
    Case(f("brooks_corey.i"), {"effective_saturation": t(0.05, 0.3, 0.7, 1.0, 1.2)}),
    # the extension below 0.15 (down to zero and negative saturations), the transition
    # itself (the correlation's branch) and above
    Case(f("brooks_corey_log.i"), {"S": t(-0.05, 0.0, 0.05, 0.1499, 0.15, 0.3, 0.9)}),
    Case(
        f("brooks_corey_variable.i"),
        {"effective_saturation": t(0.1, 0.5, 0.9), "entry_pressure": t(1e3, 2e3, 5e2)},
    ),
    # 1 and beyond: the saturation is held at 1 - eps
    Case(f("van_genuchten.i"), {"effective_saturation": t(0.05, 0.3, 0.6, 0.95, 1.0, 1.3)}),
    Case(f("van_genuchten_log.i"), {"S": t(0.0, 0.05, 0.19, 0.2, 0.5, 0.99)}),
    Case(
        f("van_genuchten_variable.i"),
        {
            "effective_saturation": t(0.02, 0.08, 0.4, 0.8),
            "vg_a": t(1e3, 2e2, 5e3, 7e2),
            "vg_m": t(0.3, 0.5, 0.7, 0.45),
        },
    ),
    Case(f("power_law_permeability.i"), {"porosity": t(0.05, 0.25, 0.4, 0.6)}),
    Case(f("exponential_law_permeability.i"), {"phi": t(0.0, 0.1, 0.3, 0.55)}),
    Case(f("kozeny_carman_permeability.i"), {"porosity": t(0.05, 0.2, 0.35, 0.6)}),
    Case(
        f("advective_stress.i"),
        {"deformation_gradient": r2(1, 0.1, 4, True), "pk1_stress": r2(2, 100.0, 4)},
    ),
    Case(
        f("advective_stress_named.i"),
        {
            "J_swelling": t(1.0, 1.05, 0.97, 1.2),
            "J_thermal": t(1.01, 0.99, 1.0, 1.1),
            "F": r2(3, 0.1, 4, True),
            "P": r2(4, 100.0, 4),
        },
    ),
    Case(
        f("advective_stress_swelling.i"),
        {
            "js": t(1.1, 0.9, 1.02),
            "deformation_gradient": r2(5, 0.05, 3, True),
            "pk1_stress": r2(6, 50.0, 3),
        },
    ),
    # saturation and swelling into the advective stress: Se from -0.1 (extended) through
    # 0.02 (extended) to 1.1
    Case(
        f("composed_swelling.i"),
        {
            "fluid_fraction": t(0.0, 0.06, 0.2, 0.4, 0.55),
            "deformation_gradient": r2(11, 0.1, 5, True),
            "pk1_stress": r2(12, 100.0, 5),
        },
    ),
    # the whole family in one model: Se from -0.05 (extended) through 0.094 (extended)
    # to 0.91
    Case(
        f("composed.i"),
        {
            "fluid_fraction": t(0.03, 0.1, 0.3, 0.5, 0.55),
            "porosity": t(0.1, 0.2, 0.3, 0.4, 0.5),
            "temperature": t(300.0, 350.0, 420.0, 280.0, 500.0),
            "deformation_gradient": r2(7, 0.1, 5, True),
            "pk1_stress": r2(8, 100.0, 5),
        },
    ),
]

#: NEML2 3.1.0 computes these values but not their Jacobians: the column of a parameter
#: a variable gives is missing (TypeError in torch.zeros); EffectiveSaturation's
#: max_fraction is the one coupled parameter whose column NEML2 has. Nor does it compute
#: the Jacobian of composed.i, whose outputs do not all depend on every Scalar input (a
#: zero Scalar block: the same TypeError); composed_swelling.i's do, and NEML2 has it.
NO_NEML2_JACOBIAN = {"brooks_corey_variable", "van_genuchten_variable", "composed"}

#: NEML2 3.1.0 cannot evaluate AdvectiveStress with a coupled coefficient (IndexError,
#: "tuple index out of range": its forward does not read the coupled value).
REFUSED = Case(
    f("advective_stress_variable.i"),
    {
        "jt": t(1.0, 1.1, 0.95),
        "deformation_gradient": r2(9, 0.1, 3, True),
        "pk1_stress": r2(10, 100.0, 3),
        "c": t(0.5, -1.0, 2.0),
    },
)


@pytest.fixture(scope="module")
def theirs(oracle_folder):  # noqa: F811 (the fixture imported above)
    return answers(oracle_folder, [*CASES, REFUSED])


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c.id for c in CASES])
def test_agrees_with_neml2(index: int, theirs: list[dict]) -> None:
    case = CASES[index]
    # NEML2's Jacobian is compared wherever NEML2 computes one
    assert ("jacobian_error" in theirs[index]) == (case.id in NO_NEML2_JACOBIAN), case.id
    check(case, theirs[index])


def test_coupled_advective_coefficient(theirs: list[dict]) -> None:
    """NEML2 3.1.0 refuses to evaluate it; ours equals the model with each point's
    coefficient as a number, and its Jacobian (the coefficient's column included) agrees
    with central differences."""
    assert "tuple index out of range" in theirs[-1].get("error", ""), theirs[-1]
    model = REFUSED.build()
    x = dict(REFUSED.inputs)
    ours = model.forward(x)["advective_stress"]
    for b, c in enumerate(x["c"].tolist()):
        fixed = build(f"type = AdvectiveStress\n jt = jt\n coefficient = {c!r}")
        one = {k: v[b : b + 1] for k, v in x.items() if k != "c"}
        torch.testing.assert_close(
            ours[b : b + 1], fixed.forward(one)["advective_stress"], rtol=1e-14, atol=0.0
        )
    check_by_differences(model, x, REFUSED.id)
    dc = model.jacobian(x)["advective_stress"]["c"]
    assert bool((dc.abs() > 0).all())


@pytest.mark.parametrize(
    "index",
    [i for i, c in enumerate(CASES) if c.build().parameters],
    ids=[c.id for c in CASES if c.build().parameters],
)
def test_parameter_jacobian_by_differences(index: int) -> None:
    case = CASES[index]
    model = case.build()
    parameter_jacobian_by_differences(model, case.inputs, case.id, atol=1e-7)


def build(body: str, tensors: str = "") -> Model:
    text = f"{tensors}[Models]\n [model]\n {body}\n []\n[]\n"
    return build_model(hit.parse(text, "f.i").children["Models"].children["model"])


@pytest.mark.parametrize(
    ("law", "params", "sp", "S"),
    [
        ("BrooksCoreyCapillaryPressure", "threshold_pressure = 1.2e4\n exponent = 2.4", 0.15,
         t(-0.05, 0.0, 0.05, 0.1499, 0.15, 0.3, 0.9)),
        ("VanGenuchtenCapillaryPressure", "a = 850\n m = 0.62", 0.2,
         t(0.0, 0.05, 0.19, 0.2, 0.5, 0.99)),
    ],
)  # fmt: skip
def test_log_extension_branches(law: str, params: str, sp: float, S: torch.Tensor) -> None:
    """Below the transition (strictly) the extension differs from the correlation and is
    log-linear in S with the correlation's value and slope at the transition; at and above
    it the two models agree exactly."""
    options = f"log_extension = true\n transition_saturation = {sp}"
    extended = build(f"type = {law}\n {params}\n {options}")
    plain = build(f"type = {law}\n {params}")
    (a,) = extended.forward({"effective_saturation": S}).values()
    (b,) = plain.forward({"effective_saturation": S}).values()
    below = sp > S
    assert bool(below.any())
    assert bool((~below).any())
    assert torch.equal(a[~below], b[~below])
    assert bool(torch.isfinite(a).all())
    assert bool((a[below] != b[below]).all())
    # log10 Pc linear below the transition: equal slopes between the extended points
    s, logs = S[below], torch.log10(a[below])
    slopes = (logs[1:] - logs[:-1]) / (s[1:] - s[:-1])
    torch.testing.assert_close(slopes, slopes[:1].expand_as(slopes), rtol=1e-9, atol=0.0)
    # continuous in value and slope at the transition
    at = t(sp)
    (pc,) = plain.forward({"effective_saturation": at}).values()
    (dpc,) = plain.jacobian({"effective_saturation": at}).values()
    ln10 = 2.302585092994046
    torch.testing.assert_close(slopes[0], dpc["effective_saturation"][0] / pc[0] / ln10)


def test_van_genuchten_holds_full_saturation() -> None:
    """From 1 - eps on, the value (and NEML2's derivative) stays at that of 1 - eps."""
    model = build("type = VanGenuchtenCapillaryPressure\n a = 3.2e3\n m = 0.45")
    x = {"effective_saturation": t(1.0 - 2.0**-52, 1.0, 1.3)}
    out = model.forward(x)["capillary_pressure"]
    jac = model.jacobian(x)["capillary_pressure"]["effective_saturation"]
    assert out.tolist() == [out[0].item()] * 3
    assert out[0] > 0
    assert jac.tolist() == [jac[0].item()] * 3
    assert jac[0] < 0


def test_composed_branches() -> None:
    """The composed cases reach both sides of their transitions (and Brooks-Corey's
    saturation beyond 1), and every output of composed.i depends on its inputs as the
    chain says."""
    for case, sp in zip(CASES[-2:], (0.05, 0.1), strict=True):
        out = case.build().forward(dict(case.inputs))
        Se = out["effective_saturation"]
        assert bool((Se < 0).any())
        assert bool(((Se > 0) & (Se < sp)).any())
        assert bool(((Se > sp) & (Se < 1)).any())
        assert bool(torch.isfinite(out["capillary_pressure"]).all())
        assert bool((out["capillary_pressure"] > 0).all())
    assert bool((Se > 0.9).any())
    assert float(CASES[-2].build().forward(dict(CASES[-2].inputs))["effective_saturation"][-1]) > 1
    case = CASES[-1]
    jac = case.build().jacobian(dict(case.inputs))
    assert bool((jac["permeability"]["fluid_fraction"] == 0).all())
    assert bool((jac["permeability"]["porosity"] > 0).all())
    assert bool((jac["capillary_pressure"]["fluid_fraction"] < 0).all())
    assert bool((jac["advective_stress"]["temperature"] != 0).all())


@pytest.mark.parametrize(
    ("body", "message"),
    [
        # NEML2 3.1.0 refuses each of these too
        (
            "type = BrooksCoreyCapillaryPressure\n threshold_pressure = 1\n exponent = 2\n"
            " log_extension = true",
            "needs a positive 'transition_saturation'",
        ),
        (
            "type = VanGenuchtenCapillaryPressure\n a = 1\n m = 0.5\n log_extension = true\n"
            " transition_saturation = 1.5",
            r"expected a saturation in \[0, 1\], got 1.5",
        ),
        (
            "type = VanGenuchtenCapillaryPressure\n a = 1\n m = 0.5\n log_extension = maybe",
            "expected a boolean",
        ),
        # parameters NEML2 does not let a variable give
        (
            "type = EffectiveSaturation\n residual_saturation = sr\n max_fraction = 0.8",
            "residual_saturation",
        ),
        (
            "type = KozenyCarmanPermeability\n reference_permeability = 1\n"
            " reference_porosity = 0.3\n n = nv\n m = 2",
            "parameter 'n'",
        ),
        # an option of another type, a missing parameter
        (
            "type = PowerLawPermeability\n reference_permeability = 1\n reference_porosity = 0.3\n"
            " exponent = 2\n log_extension = true",
            "unknown parameter 'log_extension'",
        ),
        ("type = AdvectiveStress\n js = J", "coefficient"),
        (
            "type = ExponentialLawPermeability\n reference_permeability = 1\n scale = 2",
            "reference_porosity",
        ),
    ],
)  # fmt: skip
def test_refuses(body: str, message: str) -> None:
    with pytest.raises(HitError, match=message):
        build(body)


def test_kernels_export() -> None:
    """The composed capillary pressure with its extension (masks, the parameters inside
    the extension) and the advective stress with its swelling Jacobian (R2 blocks)
    export."""
    exports(next(c for c in CASES if c.id == "composed_swelling"))
