"""KWN precipitation against NEML2 3.1.0: the driving forces, nucleation barrier and
critical radius, Zeldovich and kinetic factors, nucleation flux, projected diffusivity
sum, SFFK and rate-limited growth rates, precipitate volume fraction and matrix
concentration.

Every file of tests/neml2_inputs/kwn is evaluated by NEML2 (one oracle process for the
module) and by our eager model, values and Jacobians at rtol 1e-8: parameters given as
numbers, as [Tensors] with one value per size bin and as variables (entry by entry for
list options, with and without the size-bin axis), the points chosen for each sign a
formula can take (supersaturated and depleted matrices, driving forces of both signs,
concentrations above and below equilibrium). No model of the family clamps anything.
Where an input has the size-bin axis NEML2 reports its Jacobian summed over the bins, so
ours is also checked entry by entry against central differences; the parameter
Jacobians, which NEML2 does not report, are checked against central differences of our
forward. composed.i chains ten of the types into one KWN step and agrees with NEML2 too.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from neml2 import hit
from neml2.errors import HitError
from neml2.models import Model, build_model
from neml2.models.sub_batch import build_with_settings

from .oracle import (  # noqa: F401
    Case,
    answers,
    as_neml2_writes,
    full_jacobian,
    oracle_folder,
)
from .test_neml2_oracle import INPUTS, assert_agree
from .test_viscoelasticity_oracle import exports

FOLDER = INPUTS / "kwn"
F64 = torch.float64


def t(*values: float) -> torch.Tensor:
    """A batch of scalars."""
    return torch.tensor(values, dtype=F64)


def bins(*rows: tuple[float, ...]) -> torch.Tensor:
    """A batch of per-bin values, one row per point."""
    return torch.tensor(rows, dtype=F64)


def f(name: str) -> Path:
    return FOLDER / name


#: Matrix number densities per size bin (0.5, 1.5, 4.5 nm) for composed.i: from a matrix
#: far above equilibrium (none precipitated yet) to one depleted below it (the last two
#: points).
DENSITIES = bins(
    (1e22, 1e21, 1e20),
    (5e23, 2e22, 1e21),
    (0.0, 0.0, 0.0),
    (5e23, 5e22, 3e22),
    (2e23, 5e22, 3.5e22),
)

CASES = [
    Case(
        f("chemical_gibbs.i"),
        {"dx_mg": t(0.3, -0.1, 0.0, 0.25), "dx_si": t(0.2, 0.4, -0.3, 0.0)},
    ),
    Case(
        f("chemical_gibbs_promoted.i"),
        {
            "dx_a": t(0.1, -0.2, 0.33),
            "dx_b": t(0.05, 0.3, -0.1),
            "mu_a": t(-5e3, 1e3, 0.0),
            "mu_b_eq": t(2e3, -4e3, 2.5e3),
        },
    ),
    # small and large precipitated fractions, one of each phase alone
    Case(
        f("current_concentration.i"),
        {"f_beta": t(0.0, 0.01, 0.03, 0.0, 0.2), "f_theta": t(0.0, 0.005, 0.0, 0.02, 0.3)},
    ),
    Case(
        f("current_concentration_promoted.i"),
        {"f": t(0.0, 0.02, 0.1, 0.4), "x0": t(0.01, 0.005, 0.02, 0.1),
         "xp": t(0.3, 0.25, 0.1, 0.5)},
    ),
    # supersaturated, at equilibrium and depleted (a negative driving force)
    Case(
        f("driving_force.i"),
        {
            "temperature": t(600.0, 650.0, 700.0, 800.0),
            "x_mg": t(8e-3, 2e-3, 1e-3, 3e-3),
            "x_si": t(4e-3, 1e-3, 5e-4, 2e-4),
        },
    ),
    Case(
        f("driving_force_one_weight.i"),
        {"T": t(500.0, 700.0, 900.0), "c1": t(2e-3, 1e-4, 5e-4), "c2": t(1e-3, 8e-4, 1e-4)},
    ),
    Case(
        f("driving_force_promoted.i"),
        {"temperature": t(600.0, 700.0, 750.0), "x": t(5e-3, 1e-3, 2e-4),
         "x_eq": t(1e-3, 1e-3, 1e-3)},
    ),
    Case(
        f("kinetic_factor.i"),
        {
            "critical_radius": t(2e-10, 5e-10, 1e-9, -3e-10),
            "projected_diffusivity_sum": t(1e19, 3e20, 5e18, 2e19),
        },
    ),
    Case(
        f("kinetic_factor_promoted.i"),
        {
            "Rc": t(3e-10, 8e-10, 1.5e-9),
            "psum": t(2e19, 5e18, 1e20),
            "Vm": t(1e-5, 1.2e-5, 7e-6),
            "NA": t(6.02214076e23, 6e23, 6.1e23),
        },
    ),
    Case(f("nucleation_barrier.i"), {}, batch=2),
    # a positive and a negative driving force (a negative critical radius)
    Case(
        f("nucleation_barrier_promoted.i"),
        {"gamma": t(0.08, 0.12, 0.2, 0.1), "dg": t(4e3, 8e3, 1.5e4, -5e3)},
    ),
    Case(
        f("nucleation_flux.i"),
        {
            "zeldovich_factor": t(0.05, 0.1, 0.3),
            "kinetic_factor": t(10.0, 50.0, 1e3),
            "nucleation_barrier": t(2e-20, 1e-19, 5e-21),
            "temperature": t(600.0, 700.0, 800.0),
        },
    ),
    Case(
        f("nucleation_flux_promoted.i"),
        {
            "Z": t(0.1, 0.2),
            "beta": t(20.0, 200.0),
            "G_star": t(3e-20, 0.0),
            "T": t(650.0, 720.0),
            "N0": t(6e28, 1e27),
        },
    ),
    Case(
        f("volume_fraction.i"),
        {"number_density": bins((1e23, 1e22, 1e21, 1e20), (0.0, 5e22, 0.0, 2e21), (3e24, 0, 0, 0))},
    ),
    Case(
        f("volume_fraction_one_radius.i"),
        {"n": bins((1e22, 2e22, 3e22, 4e22, 5e22), (0, 0, 1e23, 0, 0), (7e21, 0, 0, 0, 9e20))},
    ),
    Case(
        f("volume_fraction_promoted.i"),
        {
            "number_density": bins((1e23, 1e22, 1e21), (2e22, 0.0, 3e21), (5e23, 4e22, 1e20)),
            "R": bins((1e-9, 2e-9, 4e-9), (0.8e-9, 1.6e-9, 3.2e-9), (0.5e-9, 1e-9, 6e-9)),
        },
    ),
    Case(
        f("projected_diffusivity.i"),
        {"x_mg": t(5e-3, 1e-2, 2e-4), "x_si": t(3e-3, 1e-4, 6e-3)},
    ),
    Case(
        f("projected_diffusivity_promoted.i"),
        {
            "xa": t(4e-3, 1e-3, 2e-2),
            "xb": t(2e-3, 5e-3, 1e-3),
            "dxa": t(0.3, -0.2, 0.0),
            "Db": t(1e-18, 3e-19, 2e-17),
        },
    ),
    # above, at and below the equilibrium concentration (growth, none, dissolution)
    Case(f("rate_limited.i"), {"current_concentration": t(5e-3, 2e-3, 1e-3, 3e-2)}),
    Case(
        f("rate_limited_promoted.i"),
        {
            "x": t(4e-3, 1e-3, 2e-3, 6e-3),
            "R": bins((1e-9, 2e-9, 5e-9), (0.5e-9, 1e-9, 3e-9), (2e-9, 4e-9, 8e-9),
                      (1e-8, 2e-8, 3e-8)),
            "x_eq": t(1e-3, 2e-3, 2e-3, 5e-4),
            "dx": t(0.25, 0.3, 0.2, 0.1),
            "D": t(1e-18, 5e-19, 2e-18, 1e-17),
        },
    ),
    Case(
        f("sffk.i"),
        {"projected_diffusivity_sum": t(1e19, 5e20, 3e18), "temperature": t(600.0, 700.0, 850.0)},
    ),
    Case(
        f("sffk_promoted.i"),
        {
            "projected_diffusivity_sum": t(1e19, 2e20, 6e18, 4e19),
            "temperature": t(600.0, 650.0, 700.0, 900.0),
            "R": bins((1e-9, 4e-9), (2e-9, 3e-9), (5e-10, 1e-8), (3e-9, 6e-9)),
            "dg": t(4e3, -2e3, 0.0, 9e3),
            "Rg": t(8.314, 8.314462618, 8.3, 8.32),
        },
    ),
    Case(
        f("zeldovich.i"),
        {"critical_radius": t(2e-10, 5e-10, 1e-9, -4e-10),
         "temperature": t(600.0, 700.0, 800.0, 650.0)},
    ),
    Case(
        f("zeldovich_promoted.i"),
        {"Rc": t(3e-10, 7e-10, 1.2e-9), "T": t(550.0, 700.0, 900.0), "gamma": t(0.05, 0.12, 0.3)},
    ),
    Case(f("composed.i"),
         {"temperature": t(600.0, 650.0, 700.0, 750.0, 680.0), "number_density": DENSITIES}),
]  # fmt: skip

IDS = [c.id for c in CASES]

#: NEML2 3.1.0 computes the values but not the Jacobian of a volume fraction whose radius
#: has no size-bin axis (IndexError: dim -1 out of range): ours is checked by
#: differences there.
NO_NEML2_JACOBIAN = {"volume_fraction_one_radius"}

#: The relative step of the central differences: the family's arguments range from 1e-23
#: (the Boltzmann constant) to 1e28 (site densities), so each component moves by a
#: fraction of its own size.
STEP = 1e-6


def close(have: torch.Tensor, want: torch.Tensor, what: str) -> None:
    """Agreement with a difference quotient: rtol 1e-6, atol 1e-6 of the largest entry."""
    scale = max(float(want.abs().max()), 1e-300) if want.numel() else 1.0
    torch.testing.assert_close(have, want, rtol=1e-6, atol=1e-6 * scale, msg=what)


def step_of(value: torch.Tensor) -> torch.Tensor:
    """A step per entry, ``STEP |value|``; where the value is 0, ``STEP`` times the
    largest magnitude of ``value`` (or ``STEP`` where all are 0)."""
    scale = max(float(value.abs().max()), 1.0) if bool((value == 0).all()) else None
    fallback = STEP * (scale if scale is not None else float(value.abs().max()))
    return torch.where(value == 0, torch.full_like(value, fallback), STEP * value.abs())


def jacobian_by_differences(model: Model, x: dict[str, torch.Tensor], what: str) -> None:
    """Every Jacobian block of ``model`` at ``x`` against central differences of its
    forward, each component of each point moved by its own relative step."""
    jac = full_jacobian(model, x)
    for wrt, value in x.items():
        flat = value.reshape(value.shape[0], -1)
        for j in range(flat.shape[1]):
            h = step_of(flat[:, j])
            plus, minus = flat.clone(), flat.clone()
            plus[:, j] += h
            minus[:, j] -= h
            up = model.forward({**x, wrt: plus.reshape(value.shape)})
            down = model.forward({**x, wrt: minus.reshape(value.shape)})
            for of, hi in up.items():
                size = model.variable(of).size
                column = jac[of][wrt].reshape(value.shape[0], size, -1)[:, :, j]
                quotient = (hi - down[of]).reshape(value.shape[0], size) / (2 * h[:, None])
                close(column, quotient, f"{what} d{of}/d{wrt}[{j}]")


def parameter_jacobian_by_differences(model: Model, x: dict[str, torch.Tensor], what: str) -> None:
    """Every parameter Jacobian block against central differences, each component of each
    parameter moved by its own relative step (in place, restored exactly)."""
    pjac = model.param_jacobian(dict(x))
    for name, value in model.parameters.items():
        saved = value.clone()
        for j in range(max(1, saved.numel())):
            h = float(step_of(saved.reshape(-1)[j]))
            results = []
            try:
                for move in (h, -h):
                    moved = saved.clone()
                    moved.view(-1)[j] += move
                    value.copy_(moved)
                    results.append(model.forward(dict(x)))
            finally:
                value.copy_(saved)
            for of, hi in results[0].items():
                size = model.variable(of).size
                quotient = ((hi - results[1][of]) / (2 * h)).reshape(-1, size)
                block = pjac[of][name].reshape(-1, size, max(1, saved.numel()))[..., j]
                points = max(block.shape[0], quotient.shape[0])
                close(
                    block.expand(points, size),
                    quotient.expand(points, size),
                    f"{what} d{of}/d{name}[{j}]",
                )


def check(case: Case, theirs: dict) -> None:
    """Our eager outputs and Jacobian agree with NEML2's at rtol 1e-8; where NEML2 sums a
    per-bin input's block over the bins, or has no Jacobian, ours is also checked by
    differences."""
    assert "error" not in theirs, f"NEML2 refused {case.id}: {theirs['error']}"
    model = case.build()
    x = dict(case.inputs)
    ours = model.forward(x)
    if not x:
        ours = {k: v.expand(case.batch, *v.shape) for k, v in ours.items()}
    assert_agree(ours, theirs["outputs"], f"{case.id} outputs")
    if not x:
        return
    if "jacobian_error" in theirs:
        jacobian_by_differences(model, x, case.id)
        return
    mine = as_neml2_writes(model, full_jacobian(model, x), theirs["jacobian"])
    assert_agree(mine, theirs["jacobian"], f"{case.id} jacobian")
    if any(v.sub_batch for v in model.inputs):
        jacobian_by_differences(model, x, case.id)


@pytest.fixture(scope="module")
def theirs(oracle_folder: Path) -> list[dict]:  # noqa: F811 (the fixture imported above)
    return answers(oracle_folder, [*CASES, *nonfinite_cases(oracle_folder)])


def test_every_type_and_file_is_covered() -> None:
    """Each of the eleven types has a case, and every file of the folder is one."""
    files = sorted(p.name for p in FOLDER.glob("*.i"))
    assert files == sorted(c.file.name for c in CASES)
    text = "\n".join(p.read_text() for p in FOLDER.glob("*.i"))
    from neml2.models.kwn import PROMOTABLE

    for type_name in PROMOTABLE:
        assert f"type = {type_name}" in text, type_name


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_agrees_with_neml2(index: int, theirs: list[dict]) -> None:
    case = CASES[index]
    # NEML2's Jacobian is compared wherever NEML2 computes one
    assert ("jacobian_error" in theirs[index]) == (case.id in NO_NEML2_JACOBIAN), case.id
    check(case, theirs[index])


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_jacobian_by_differences(index: int) -> None:
    """Every case's Jacobian, entry by entry, against relative central differences."""
    case = CASES[index]
    if not case.inputs:
        assert not case.build().inputs
        return
    jacobian_by_differences(case.build(), dict(case.inputs), case.id)


@pytest.mark.parametrize(
    "index",
    [i for i, c in enumerate(CASES) if c.build().parameters],
    ids=[c.id for c in CASES if c.build().parameters],
)
def test_parameter_jacobian_by_differences(index: int) -> None:
    case = CASES[index]
    model = case.build()
    parameter_jacobian_by_differences(model, dict(case.inputs), case.id)


#: The single-type cases whose model has a per-bin input.
PER_BIN_CASES = [
    i
    for i, c in enumerate(CASES)
    if c.id != "composed" and any(v.sub_batch for v in c.build().inputs)
]


@pytest.mark.parametrize("index", PER_BIN_CASES, ids=[IDS[i] for i in PER_BIN_CASES])
def test_sub_batched_blocks(index: int) -> None:
    """In each type, a per-bin output depends on its own bin of a per-bin input only (a
    diagonal block); the volume fraction sums the bins (a full row)."""
    case = CASES[index]
    model = case.build()
    jac = model.jacobian(dict(case.inputs))
    for of in model.outputs:
        for wrt in model.inputs:
            block = jac[of.name][wrt.name]
            if not wrt.sub_batch:
                continue
            if of.sub_batch:
                eye = torch.eye(of.shape[0], dtype=torch.bool)
                assert bool((block[:, ~eye] == 0).all()), (of.name, wrt.name)
                assert bool((block[:, eye] != 0).any()), (of.name, wrt.name)
            else:
                assert tuple(block.shape) == (case.batch, *wrt.shape)


def build(body: str, tensors: str = "", settings: str = "") -> Model:
    text = f"{settings}{tensors}[Models]\n [model]\n {body}\n []\n[]\n"
    root = hit.parse(text, "f.i")
    if settings:
        return build_with_settings(root, "model")
    return build_model(root.children["Models"].children["model"])


def test_promoted_parameters_equal_the_values() -> None:
    """A model whose parameters variables give equals, point by point, the model with
    each point's values written as numbers (list options entry by entry)."""
    case = next(c for c in CASES if c.id == "chemical_gibbs_promoted")
    x = dict(case.inputs)
    ours = case.build().forward(x)["dG_chem"]
    for b in range(case.batch):
        mu_a, mu_b_eq = float(x["mu_a"][b]), float(x["mu_b_eq"][b])
        fixed = build(
            "type = ChemicalGibbsFreeEnergyDifference\n concentration_differences = 'dx_a dx_b'\n"
            f" chemical_potentials = '{mu_a!r} 2.5e3'\n"
            f" equilibrium_potentials = '-7.0e3 {mu_b_eq!r}'"
        )
        point = {k: x[k][b : b + 1] for k in ("dx_a", "dx_b")}
        value = fixed.forward(point)["chemical_gibbs_free_energy"]
        torch.testing.assert_close(ours[b : b + 1], value, rtol=1e-14, atol=0.0)
    case = next(c for c in CASES if c.id == "sffk_promoted")
    x = dict(case.inputs)
    rates = case.build().forward(x)["growth_rate"]
    for b in range(case.batch):
        radii = ", ".join(repr(r) for r in x["R"][b].tolist())
        fixed = build(
            f"type = SFFKPrecipitationGrowthRate\n radius = 'radii'\n"
            f" gibbs_free_energy_difference = {float(x['dg'][b])!r}\n"
            f" gas_constant = {float(x['Rg'][b])!r}",
            "[Tensors]\n [radii]\n type = Python\n"
            f" expr = 'Scalar(torch.tensor([{radii}], dtype=torch.float64))'\n []\n[]\n",
        )
        point = {k: x[k][b : b + 1] for k in ("projected_diffusivity_sum", "temperature")}
        value = fixed.forward(point)["growth_rate"]
        torch.testing.assert_close(rates[b : b + 1], value, rtol=1e-14, atol=0.0)


def test_parameter_names() -> None:
    """Single options are ``<block>.<option>``, list entries ``<block>.<option>_<i>``; a
    promoted entry leaves the parameters and joins the inputs; one weight serves every
    species."""
    model = next(c for c in CASES if c.id == "chemical_gibbs_promoted").build()
    assert sorted(model.parameters) == [
        "model.chemical_potentials_1",
        "model.equilibrium_potentials_0",
    ]
    assert [v.name for v in model.inputs] == ["dx_a", "dx_b", "mu_a", "mu_b_eq"]
    model = next(c for c in CASES if c.id == "driving_force_one_weight").build()
    assert "model.weights_0" in model.parameters
    assert "model.weights_1" not in model.parameters
    x = {"T": t(700.0), "c1": t(2e-3), "c2": t(1e-3)}
    d = model.param_jacobian(x)["dg"]["model.weights_0"]
    expected = 8.314462618 * 700.0 * (math.log(2e-3 / 5e-4) + math.log(1e-3 / 8e-4))
    torch.testing.assert_close(d, t(expected), rtol=1e-12, atol=0.0)
    model = next(c for c in CASES if c.id == "driving_force_promoted").build()
    assert float(model.parameters["model.weights_0"]) == 1.0  # the default unit weight


def test_composed_branches(theirs: list[dict]) -> None:
    """composed.i reaches a supersaturated matrix (one without precipitates among them)
    and a depleted one: the critical radius and both growth rates change sign with the
    matrix concentration, and the nucleation flux stays finite."""
    case = CASES[IDS.index("composed")]
    x = dict(case.inputs)
    out = case.build().forward(x)
    radii = torch.tensor([0.5e-9, 1.5e-9, 4.5e-9], dtype=F64)
    fraction = (4.0 / 3.0 * math.pi * radii**3 * x["number_density"]).sum(-1)
    matrix = (4.0e-3 - 0.25 * fraction) / (1.0 - fraction)
    above = matrix > 1.0e-3
    assert bool(above.any())
    assert bool((~above).any())
    assert bool((fraction == 0).any())
    assert torch.equal(out["critical_radius"] > 0, above)
    for rate in ("growth_rate", "limited_growth_rate"):
        r = out[rate]
        assert r.shape == (case.batch, 3)
        assert torch.equal(r > 0, above.unsqueeze(-1).expand_as(r))
    assert bool(torch.isfinite(out["nucleation_flux_magnitude"]).all())
    assert bool((out["nucleation_flux_magnitude"] > 0).all())
    assert set(theirs[IDS.index("composed")]["outputs"]) == set(out)


#: (type body, the option refused at build, NEML2's value, given as NEML2 3.1.0 takes it):
#: a value that makes every evaluation of the model non-finite.
NONFINITE = [
    (
        "type = ZeldovichFactor\n surface_energy = 0.1\n molar_volume = 1e-5\n"
        " avogadro_number = 6e23\n boltzmann_constant = 0",
        "boltzmann_constant",
        {"critical_radius": t(5e-10), "temperature": t(700.0)},
    ),
    (
        "type = KineticFactor\n molar_volume = 1e-5\n avogadro_number = -6e23",
        "avogadro_number",
        {"critical_radius": t(5e-10), "projected_diffusivity_sum": t(1e19)},
    ),
    (
        "type = ZeldovichFactor\n surface_energy = 0.1\n molar_volume = 1e-5\n"
        " avogadro_number = 0\n boltzmann_constant = 1.38e-23",
        "avogadro_number",
        {"critical_radius": t(5e-10), "temperature": t(700.0)},
    ),
    (
        "type = KineticFactor\n molar_volume = -1e-5\n avogadro_number = 6e23",
        "molar_volume",
        {"critical_radius": t(5e-10), "projected_diffusivity_sum": t(1e19)},
    ),
    (
        "type = ProjectedDiffusivitySum\n far_field_concentrations = 'x'\n"
        " concentration_differences = 0.2\n diffusivities = 0",
        "diffusivities",
        {"x": t(1e-3)},
    ),
    (
        "type = RateLimitedPrecipitateGrowthRate\n radius = 1e-9\n"
        " equilibrium_concentration = 1e-3\n concentration_difference = 0\n diffusivity = 1e-18",
        "concentration_difference",
        {"current_concentration": t(2e-3)},
    ),
    (
        "type = SFFKPrecipitationGrowthRate\n radius = 0\n gibbs_free_energy_difference = 1e3\n"
        " gas_constant = 8.314",
        "radius",
        {"projected_diffusivity_sum": t(1e19), "temperature": t(700.0)},
    ),
    (
        "type = IdealSolutionVolumetricDrivingForce\n current_concentrations = 'x'\n"
        " equilibrium_concentrations = -1e-3\n gas_constant = 8.314",
        "equilibrium_concentrations",
        {"temperature": t(700.0), "x": t(2e-3)},
    ),
]  # fmt: skip


class Neml2Only(Case):
    """A case only NEML2 evaluates (ours refuses to build it): no sub-batch axes."""

    def build(self) -> Model:
        return Model("unbuilt", [], [], {})


def nonfinite_cases(folder: Path) -> list[Case]:
    cases: list[Case] = []
    for index, (body, _, x) in enumerate(NONFINITE):
        path = folder / f"nonfinite_{index}.i"
        path.write_text(f"[Models]\n [model]\n {body}\n []\n[]\n")
        cases.append(Neml2Only(path, x))
    return cases


@pytest.mark.parametrize(
    "index", range(len(NONFINITE)), ids=[f"{n[0].split()[2]}-{n[1]}" for n in NONFINITE]
)
def test_refuses_what_neml2_computes_nothing_with(index: int, theirs: list[dict]) -> None:
    """NEML2 3.1.0 evaluates these to inf or NaN; they are refused at build here."""
    body, key, _ = NONFINITE[index]
    answer = theirs[len(CASES) + index]
    assert "error" not in answer, answer
    (value,) = answer["outputs"].values()
    assert not bool(torch.isfinite(value).all()), value
    with pytest.raises(
        HitError, match=f"parameter '{key}': expected (positive|nonzero|nonnegative) values"
    ):
        build(body)


PER_BIN = "[Tensors]\n [r]\n type = Python\n expr = 'Scalar(torch.tensor([1e-9, 2e-9], dtype=torch.float64))'\n []\n[]\n"  # noqa: E501


@pytest.mark.parametrize(
    ("body", "message", "tensors", "settings"),
    [
        # list lengths: one entry per species (weights: one or one per species)
        ("type = ChemicalGibbsFreeEnergyDifference\n concentration_differences = 'a b'\n"
         " chemical_potentials = '1 2 3'\n equilibrium_potentials = '0 0'",
         r"parameter 'chemical_potentials': expected 2 entries", "", ""),
        ("type = IdealSolutionVolumetricDrivingForce\n current_concentrations = 'a b c'\n"
         " equilibrium_concentrations = '1e-3 1e-3 1e-3'\n gas_constant = 8.314\n weights = '1 2'",
         r"parameter 'weights': expected 1 or 3 entries", "", ""),
        ("type = ProjectedDiffusivitySum\n far_field_concentrations = ''\n"
         " concentration_differences = ''\n diffusivities = ''",
         "expected at least one variable name", "", ""),
        # parameters NEML2 does not let a variable give
        ("type = ZeldovichFactor\n surface_energy = 0.1\n molar_volume = Vm\n"
         " avogadro_number = 6e23\n boltzmann_constant = 1.38e-23",
         "parameter 'molar_volume': expected a number or a \\[Tensors\\] name", "", ""),
        ("type = IdealSolutionVolumetricDrivingForce\n current_concentrations = 'a'\n"
         " equilibrium_concentrations = 1e-3\n gas_constant = R",
         "parameter 'gas_constant'", "", ""),
        ("type = NucleationFluxMagnitude\n nucleation_site_density = 1e28\n boltzmann_constant = k",
         "parameter 'boltzmann_constant'", "", ""),
        # a missing parameter, an option of another type, a non-finite value
        ("type = KineticFactor\n molar_volume = 1e-5",
         "missing required parameter 'avogadro_number'", "", ""),
        ("type = KineticFactor\n molar_volume = 1e-5\n avogadro_number = 6e23\n radius = 1",
         "unknown parameter 'radius'", "", ""),
        ("type = SFFKPrecipitationGrowthRate\n radius = 1e-9\n"
         " gibbs_free_energy_difference = 1e400\n gas_constant = 8.314", "not a finite number",
         "", ""),
        # a promoted parameter that is an output, a name used twice
        ("type = NucleationBarrierAndCriticalRadius\n surface_energy = 0.1\n molar_volume = 1e-5\n"
         " total_gibbs_free_energy_difference = critical_radius",
         "'critical_radius' is an output of this model", "", ""),
        ("type = KineticFactor\n molar_volume = 1e-5\n avogadro_number = 6e23\n"
         " kinetic_factor = critical_radius", "already used", "", ""),
        # per-bin arguments must share their axes; the volume fraction needs the bin axis
        ("type = SFFKPrecipitationGrowthRate\n radius = r\n gibbs_free_energy_difference = 1e3\n"
         " gas_constant = 8.314", "different sub-batch axes", PER_BIN,
         "[Settings]\n [example_batch_shape]\n temperature = '(2; 3)'\n []\n[]\n"),
        ("type = PrecipitateVolumeFraction\n radius = 1e-9", "needs one sub-batch axis", "",
         "[Settings]\n [example_batch_shape]\n number_density = '(2; 3, 2)'\n []\n[]\n"),
    ],
)  # fmt: skip
def test_refuses(body: str, message: str, tensors: str, settings: str) -> None:
    def evaluate() -> None:
        model = build(body, tensors, settings)
        model.forward({v.name: torch.ones((1, *v.shape), dtype=F64) for v in model.inputs})

    with pytest.raises((HitError, ValueError), match=message):
        evaluate()


def test_volume_fraction_needs_the_bins() -> None:
    """Without a size-bin axis on the number density there is nothing to sum, even where
    the radius has one."""
    model = build("type = PrecipitateVolumeFraction\n radius = 1e-9")
    with pytest.raises(ValueError, match="needs one sub-batch axis"):
        model.forward({"number_density": t(1e22)})
    model = build(
        "type = PrecipitateVolumeFraction\n radius = R",
        settings="[Settings]\n [example_batch_shape]\n R = '(2; 3)'\n []\n[]\n",
    )
    with pytest.raises(ValueError, match="'number_density' needs one sub-batch axis"):
        model.forward({"number_density": t(1e22), "R": bins((1e-9, 2e-9, 3e-9))})


def test_kernels_export() -> None:
    """The composed step (per-bin parameters, promoted parameters, a reduction over the
    bins) exports with a dynamic batch and agrees with the eager graphs."""
    exports(CASES[IDS.index("composed")])
