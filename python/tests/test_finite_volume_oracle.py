"""Finite-volume transport against NEML2 3.1.0: gradients, upwinded fluxes and boundary
values along a cell axis, interpolation to the cell edges, smeared and dumped sources,
the semi-infinite coordinate transform, and a composed 1D advection right-hand side.

Every file of tests/neml2_inputs/finite_volume is evaluated by NEML2 (one oracle process
for the module) and by our eager model, values and Jacobians at rtol 1e-8. NEML2's
``jacobian`` seeds one direction per base component, the same in every cell, which its
stencils along the cell axis cannot take (it fails); for those cases (``dense``) NEML2's
Jacobian is built column by column from its ``jvp``, one unit tangent per cell, and
compared with our dense blocks. The points cover both signs of the velocity and zero
(where the upwind weight is 1/2), both sides of the boundary values, a single bin, cells
of unequal widths and a negative spacing. The parameter Jacobians, which NEML2 does not
report, are checked against central differences of our forward. Where NEML2 3.1.0 cannot
evaluate a file (a variable gives the shift, the width or the cell centers; fixed cell
values to interpolate), ours equals the same model with values in place of the variables and its
derivatives agree with central differences.
"""

from __future__ import annotations

import pytest
import torch

from neml2 import hit
from neml2.errors import HitError, Neml2Error
from neml2.models import Model, build_model
from neml2.models.sub_batch import build_with_settings

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

FOLDER = INPUTS / "finite_volume"
F64 = torch.float64


def t(*values: float) -> torch.Tensor:
    """A batch of scalars."""
    return torch.tensor(values, dtype=F64)


def rows(*values: list[float]) -> torch.Tensor:
    """A batch of values along the cell axis, one row per point."""
    return torch.tensor(values, dtype=F64)


def f(name: str) -> object:
    return FOLDER / name


FIVE_CELLS = rows([1.0, 0.8, 0.5, 0.3, 0.0], [0.0, 0.2, 0.1, 0.6, 1.0], [2.0, 2.0, 3.0, 1.0, 4.0])

CASES = [
    Case(
        f("gradient.i"),
        {
            "u": rows(
                [0.0, 1.0, 4.0, 9.0, 16.0, 25.0],
                [3.0, -1.0, 2.0, 2.0, 0.5, -4.0],
                [1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
            )
        },
        dense=True,
    ),
    Case(
        f("gradient_default_prefactor.i"),
        {"c": rows([1.0, 2.0, 0.0, -3.0], [0.5, 0.25, 0.125, 0.0625], [-2.0, 7.0, 7.5, 1.0])},
        dense=True,
    ),
    Case(
        f("gradient_edge_prefactor.i"),
        {
            "u": FIVE_CELLS,
            "D": rows([1.0, 2.0, 3.0, 4.0], [0.1, 0.0, 0.3, 5.0], [2.5, 1.5, 0.5, 1.0]),
        },
        dense=True,
    ),
    Case(
        f("gradient_point_prefactor.i"),
        {
            "u": FIVE_CELLS,
            "k": t(1.0, 0.3, -2.0),
        },
        dense=True,
    ),
    # velocities of both signs and zero at every edge position, flows to the right,
    # to the left, converging and diverging
    Case(
        f("upwind.i"),
        {
            "u": rows(
                [1.0, 2.0, 3.0, 4.0, 5.0], [5.0, -1.0, 0.5, 2.0, 0.0], [0.3, 0.1, 0.9, 0.4, 0.7]
            ),
            "v_edge": rows([1.0, 2.0, 0.5, 3.0], [-1.0, -0.5, -2.0, -0.25], [0.7, 0.0, -1.2, 0.0]),
        },
        dense=True,
    ),
    Case(
        f("boundary_left.i"),
        {"J": rows([1.0, 2.0, 3.0, 4.0], [-0.5, 0.0, 0.5, 1.0], [9.0, 8.0, 7.0, 6.0])},
        dense=True,
    ),
    Case(
        f("boundary_right.i"),
        {"J": rows([1.0, 2.0, 3.0, 4.0], [-0.5, 0.0, 0.5, 1.0], [9.0, 8.0, 7.0, 6.0])},
        dense=True,
    ),
    Case(
        f("interpolate.i"),
        {
            "q": rows(
                [1.0, 3.0, 2.0, 5.0, 4.0], [0.0, 0.0, 1.0, 0.0, 0.0], [-2.0, 1.5, 0.25, 8.0, -1.0]
            )
        },
        dense=True,
    ),
    Case(f("semi_infinite.i"), {"coordinate": t(0.0, 0.5, 2.5, 10.0, 1e3)}),
    Case(
        f("semi_infinite_bins.i"),
        {"r": rows([0.0, 0.1, 1.0, 4.0], [0.2, 0.8, 3.2, 12.8], [5.0, 2.0, 0.4, 0.05])},
    ),
    # sources inside the cells, at a center, at the first and beyond the last
    Case(f("smeared.i"), {"magnitude": t(2.0, -1.0, 0.5, 3.0), "location": t(1.2, 0.0, 2.6, 5.5)}),
    Case(f("dump.i"), {"magnitude": t(2.0, -1.5, 0.0)}),
    Case(f("dump_named.i"), {"nucleation_rate": t(4.0, 0.25)}),
    # the prefactor from a model the composition brings in
    Case(
        f("prefactor_model.i"),
        {
            "u": rows([0.0, 1.0, 3.0, 6.0], [1.0, -1.0, 1.0, -1.0], [2.0, 2.0, 2.0, 2.5]),
            "D": rows([1.0, 2.0, 3.0, 4.0], [0.5, 0.5, 0.1, 0.2], [3.0, 1.0, 2.0, 0.0]),
        },
        dense=True,
    ),
    # inflow at the left, flow to the right, to the left, and stagnating in the middle
    Case(
        f("composed.i"),
        {
            "c": rows(
                [1.0, 0.8, 0.6, 0.4, 0.2], [0.0, 0.5, 1.0, 0.5, 0.0], [2.0, 1.0, 3.0, 0.5, 1.5]
            ),
            "v": rows(
                [1.0, 1.0, 1.5, 2.0, 2.0],
                [-1.0, -2.0, -1.0, -0.5, -1.0],
                [1.0, 0.5, 0.0, -0.5, -1.0],
            ),
        },
        dense=True,
    ),
]  # fmt: skip

#: NEML2 3.1.0 cannot evaluate these; each is compared with ``twin``, the same model with
#: values in place of the variables, point by point (``values`` gives a point's values).
REFUSED = {
    # IndexError: its forward does not read the coupled value
    "semi_infinite_variable": (
        Case(f("semi_infinite_variable.i"), {"r": t(0.0, 0.5, 3.0), "s": t(1.0, 2.5, 0.2)}),
        "type = SemiInfiniteCoordinateTransform\n coordinate = r\n transformed_coordinate = r_hat"
        "\n shift = {s!r}",
        "tuple index out of range",
    ),
    "smeared_variable": (
        Case(
            f("smeared_variable.i"),
            {"rate": t(2.0, 1.0, -0.5), "radius": t(1.0, 2.2, 0.4), "w": t(0.6, 0.25, 1.5)},
        ),
        "type = SmearedDeltaSource\n magnitude = rate\n location = radius\n smeared_source ="
        " source\n width = {w!r}\n cell_centers = centers",
        "tuple index out of range",
    ),
    "centers_variable": (
        Case(
            f("centers_variable.i"),
            {
                "magnitude": t(2.0, -1.0, 0.5),
                "location": t(1.0, 0.3, 2.0),
                "xc": rows([0.5, 1.0, 1.5, 2.0], [0.0, 0.2, 0.5, 1.0], [1.0, 2.0, 3.0, 4.0]),
            },
        ),
        "type = SmearedDeltaSource\n width = 0.5\n cell_centers = xc",
        "tuple index out of range",
    ),
    # IndexError: its forward slices fixed cell values along a sub-batch axis they lack
    "interpolate_values": (Case(f("interpolate_values.i")), "", "too many indices"),
}


@pytest.fixture(scope="module")
def theirs(oracle_folder):  # noqa: F811 (the fixture imported above)
    refused = [case for case, _, _ in REFUSED.values()]
    return answers(oracle_folder, [*CASES, *refused])


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c.id for c in CASES])
def test_agrees_with_neml2(index: int, theirs: list[dict]) -> None:
    case = CASES[index]
    answer = theirs[index]
    assert "jacobian_error" not in answer, answer.get("jacobian_error")
    assert bool(answer.get("dense")) == case.dense, case.id
    check(case, answer)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c.id for c in CASES])
def test_jacobian_by_differences(index: int) -> None:
    """Every dense block, cells off the diagonal included, by central differences."""
    case = CASES[index]
    check_by_differences(case.build(), case.inputs, case.id)


@pytest.mark.parametrize(
    "index",
    [i for i, c in enumerate(CASES) if c.build().parameters],
    ids=[c.id for c in CASES if c.build().parameters],
)
def test_parameter_jacobian_by_differences(index: int) -> None:
    case = CASES[index]
    parameter_jacobian_by_differences(case.build(), case.inputs, case.id, atol=1e-7)


#: Scalar tables the models built from text below name as [Tensors]
TABLES = {
    "two": [0.0, 1.0],
    "three": [0.0, 1.0, 2.0],
    "four": [0.0, 1.0, 2.0, 3.0],
    "repeated": [0.0, 1.0, 1.0],
    "pair": [1.0, 2.0],
    "spacings": [0.1, 0.2],
    "centers": [0.1, 0.5, 1.2, 2.0, 3.1, 4.5],
    "fine": [0.005 + 0.01 * i for i in range(200)],
}


def build(body: str) -> Model:
    """The model of ``body``, in a file with the [Tensors] of :data:`TABLES`."""
    text = tensors() + f"[Models]\n [model]\n {body}\n []\n[]\n"
    return build_model(hit.parse(text, "f.i").children["Models"].children["model"])


def tensors() -> str:
    blocks = "".join(
        f" [{name}]\n type = Python\n expr = 'Scalar(torch.tensor({values!r}, "
        "dtype=torch.float64))'\n []\n"
        for name, values in TABLES.items()
    )
    return f"[Tensors]\n{blocks}[]\n"


@pytest.mark.parametrize("name", list(REFUSED))
def test_what_neml2_cannot_evaluate(name: str, theirs: list[dict]) -> None:
    """NEML2 3.1.0 refuses it; ours equals the model with each point's values in place
    of the variables, and its derivatives agree with central differences."""
    case, body, message = REFUSED[name]
    answer = theirs[len(CASES) + list(REFUSED).index(name)]
    assert message in answer.get("error", ""), answer
    model = case.build()
    x = dict(case.inputs)
    if not x:
        # the same interpolation with the cell values from a variable (which NEML2 takes)
        values = model.named_parameters()["model.cell_values"]
        twin = build_with_settings(hit.load(FOLDER / "interpolate.i"), "model")
        want = twin.forward({"q": values.unsqueeze(0)})["q_edge"][0]
        torch.testing.assert_close(model.forward({})["q_edge"], want, rtol=1e-14, atol=0.0)
        pjac = model.param_jacobian({})["q_edge"]["model.cell_values"]
        torch.testing.assert_close(
            pjac, twin.jacobian({"q": values.unsqueeze(0)})["q_edge"]["q"][0]
        )
        parameter_jacobian_by_differences(model, x, case.id, atol=1e-7)
        return
    coupled = {"semi_infinite_variable": "s", "smeared_variable": "w", "centers_variable": "xc"}
    coupled = coupled[name]
    ours = model.forward(x)
    for b, value in enumerate(x[coupled].tolist()):
        if coupled == "xc":  # this point's centers as a [Tensors] table
            TABLES["xc"] = value
            fixed = build(body)
            del TABLES["xc"]
        else:
            fixed = build(body.format(**{coupled: value}))
        one = {k: v[b : b + 1] for k, v in x.items() if k != coupled}
        for out, got in fixed.forward(one).items():
            torch.testing.assert_close(ours[out][b : b + 1], got, rtol=1e-14, atol=0.0)
    check_by_differences(model, x, case.id)
    jac = model.jacobian(x)
    assert all(bool((row[coupled] != 0).any()) for row in jac.values())


def case_named(name: str) -> Case:
    return next(c for c in CASES if c.id == name)


def test_upwinding_picks_the_cell_the_velocity_comes_from() -> None:
    case = case_named("upwind")
    model = case.build()
    x = dict(case.inputs)
    u, v = x["u"], x["v_edge"]
    flux = model.forward(x)["flux"]
    left, right = u[:, :-1], u[:, 1:]
    assert bool((v > 0).any())
    assert bool((v < 0).any())
    assert bool((v == 0).any())
    torch.testing.assert_close(flux[v > 0], (v * left)[v > 0], rtol=0.0, atol=0.0)
    torch.testing.assert_close(flux[v < 0], (v * right)[v < 0], rtol=0.0, atol=0.0)
    assert bool((flux[v == 0] == 0).all())
    # at zero velocity the flux moves by the mean of the two cells per unit velocity
    dv = model.jacobian(x)["flux"]["v_edge"]
    diag = torch.diagonal(dv, dim1=-2, dim2=-1)
    torch.testing.assert_close(diag[v == 0], (0.5 * (left + right))[v == 0])
    # and depends on the downwind cell nowhere
    du = model.jacobian(x)["flux"]["u"]
    for b in range(u.shape[0]):
        for i in range(v.shape[1]):
            if v[b, i] > 0:
                assert float(du[b, i, i + 1]) == 0.0
            if v[b, i] < 0:
                assert float(du[b, i, i]) == 0.0


def test_boundary_values_on_either_side() -> None:
    x = {"J": rows([1.0, 2.0, 3.0, 4.0])}
    left = case_named("boundary_left").build()
    right = case_named("boundary_right").build()
    assert left.outputs[0].name == "J_with_bc_left"
    assert left.forward(x)["J_with_bc_left"].tolist() == [[0.75, 1.0, 2.0, 3.0, 4.0]]
    assert right.forward(x)["J_full"].tolist() == [[1.0, 2.0, 3.0, 4.0, -1.25]]
    assert [v.shape for v in right.outputs] == [(5,)]


def test_shapes_along_the_cell_axis() -> None:
    model = case_named("composed").build()
    shapes = {v.name: v.shape for m in model.models for v in (*m.inputs, *m.outputs)}
    assert shapes == {
        "v": (5,),
        "v_edge": (4,),
        "c": (5,),
        "J": (4,),
        "J_with_bc_left": (5,),
        "J_all": (6,),
        "c_rate": (5,),
    }
    # a uniform concentration carried by a uniform velocity: the interior fluxes are
    # 0.5 * 0.8 = 0.4, equal to the inflow, so only the last cell, whose outflow is -0.1,
    # changes: -(-0.1 - 0.4) / 0.2 = 2.5
    x = {"c": rows([0.5] * 5), "v": rows([0.8] * 5)}
    rate = model.forward(x)["c_rate"]
    torch.testing.assert_close(rate, rows([0.0, 0.0, 0.0, 0.0, 2.5]), rtol=0.0, atol=1e-14)


def test_a_model_output_gives_the_prefactor() -> None:
    """The interpolated diffusivity weighs the differences of u edge by edge."""
    case = case_named("prefactor_model")
    model = case.build()
    assert [m.name for m in model.models] == ["diffusivity", "gradient"]
    x = {"u": rows([0.0, 1.0, 3.0, 6.0]), "D": rows([1.0, 2.0, 3.0, 4.0])}
    # edges midway between the centers: D at the edges is [1.5, 2.5, 3.5]
    assert model.forward(x)["grad_u"].tolist() == [[-1.5, -5.0, -10.5]]


def test_dumped_source_with_centers_from_a_variable() -> None:
    """The centers only count the bins: the source does not depend on them."""
    model = declared("type = DumpInSmallestBin\n cell_centers = xc", "xc = '(2; 3)'")
    x = {"magnitude": t(2.0, -0.5), "xc": rows([0.0, 1.0, 2.0], [5.0, 6.0, 9.0])}
    assert model.forward(x)["state/dumped_source"].tolist() == [[2.0, 0.0, 0.0], [-0.5, 0.0, 0.0]]
    jac = model.jacobian(x)["state/dumped_source"]
    assert jac["xc"].shape == (2, 3, 3)
    assert float(jac["xc"].abs().max()) == 0.0
    assert jac["magnitude"].tolist() == [[1.0, 0.0, 0.0]] * 2


def test_smeared_source_integrates_to_its_magnitude() -> None:
    """On fine cells the source sums (times the spacing) to the magnitude."""
    model = build("type = SmearedDeltaSource\n width = 0.1\n cell_centers = fine")
    assert [v.shape for v in model.outputs] == [(200,)]
    src = model.forward({"magnitude": t(3.0), "location": t(1.0)})["state/smeared_source"]
    torch.testing.assert_close(float(src.sum()) * 0.01, 3.0, rtol=1e-6, atol=0.0)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        # NEML2 3.1.0 refuses each of these too
        ("type = FiniteVolumeAppendBoundaryCondition\n bc_value = 1\n side = middle",
         "expected 'left' or 'right', got 'middle'"),
        ("type = FiniteVolumeGradient\n u = c", "missing required parameter 'dx'"),
        ("type = FiniteVolumeAppendBoundaryCondition\n input = J", "bc_value"),
        ("type = SmearedDeltaSource\n cell_centers = two", "width"),
        ("type = FiniteVolumeUpwindedAdvectiveFlux\n v = 1", "unknown parameter 'v'"),
        # parameters NEML2 does not let a variable give
        ("type = FiniteVolumeGradient\n dx = h", "parameter 'dx'"),
        ("type = FiniteVolumeAppendBoundaryCondition\n bc_value = b", "parameter 'bc_value'"),
        # values that make every result infinite, or do not fit the cells
        ("type = FiniteVolumeGradient\n dx = 0", "must not be 0"),
        ("type = SmearedDeltaSource\n width = 0\n cell_centers = two", "must not be 0"),
        ("type = FiniteVolumeGradient\n dx = spacings", "expected one Scalar"),
        ("type = LinearlyInterpolateToCellEdges\n cell_values = q\n cell_centers = repeated\n"
         " cell_edges = four", "two neighbouring centers coincide"),
        ("type = LinearlyInterpolateToCellEdges\n cell_values = q\n cell_centers = three\n"
         " cell_edges = three", "expected 4 edges for 3 cell centers"),
        ("type = LinearlyInterpolateToCellEdges\n cell_values = pair\n cell_centers = three\n"
         " cell_edges = four", "expected 3 values"),
    ],
)  # fmt: skip
def test_refuses(body: str, message: str) -> None:
    with pytest.raises(HitError, match=message):
        build(body)


def declared(body: str, settings: str) -> Model:
    text = f"[Settings]\n [example_batch_shape]\n {settings}\n []\n[]\n" + tensors()
    text += f"[Models]\n [model]\n {body}\n []\n[]\n"
    return build_with_settings(hit.parse(text, "f.i"), "model")


def test_axes_that_do_not_fit_are_one_line_errors() -> None:
    upwind = "type = FiniteVolumeUpwindedAdvectiveFlux"
    with pytest.raises(HitError, match=r"'v_edge' has 5 entries, expected 4"):
        declared(upwind, "u = '(2; 5)'\n v_edge = '(2; 5)'")
    with pytest.raises(HitError, match=r"'D' has 5 entries, expected 3"):
        declared(
            "type = FiniteVolumeGradient\n dx = 1\n prefactor = D", "u = '(2; 4)'\n D = '(2; 5)'"
        )
    with pytest.raises(HitError, match=r"works along one axis"):
        declared("type = FiniteVolumeGradient\n dx = 1", "u = '(2; 4, 3)'")
    with pytest.raises(HitError, match=r"has 1 cell; a gradient needs at least 2"):
        declared("type = FiniteVolumeGradient\n dx = 1", "u = '(2; 1)'")
    with pytest.raises(HitError, match=r"'magnitude' has sub-batch axes \(3,\); it is one value"):
        declared("type = DumpInSmallestBin\n cell_centers = two", "magnitude = '(2; 3)'")
    # a cell-axis input never declared: built, and a clear error when evaluated
    model = build("type = FiniteVolumeGradient\n dx = 1")
    with pytest.raises(Neml2Error, match=r"input 'u' has no sub-batch axis .*example_batch_shape"):
        model.forward({"u": t(1.0, 2.0)})


@pytest.mark.parametrize("name", ["composed", "smeared", "dump", "interpolate"])
def test_kernels_export(name: str) -> None:
    """The stencils (shifted diagonals, padding, the upwind step), the boundary values and
    the sources export with a dynamic batch and agree with the eager graphs."""
    exports(case_named(name))
