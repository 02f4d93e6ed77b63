"""GTN porous plasticity with Normality against NEML2 3.1.0.

``Normality`` on its own (the derivatives of the GTN yield function of a Mandel stress,
whose Jacobian holds the function's second derivatives) is compared with NEML2 at two
points, and its parameter Jacobian with central differences. Two GTN models of
tests/neml2_inputs/plasticity, a viscoplastic one (gtn_viscoplastic.i, a Perzyna flow
rate) and a rate-independent one (gtn_rate_independent.i, a complementarity condition),
are driven over 20 steps of a triaxial load and partial unload, each step from the state
the previous one left, and compared with NEML2 driven the same way at every step:
outputs and Jacobians at rtol 1e-8. All of NEML2's answers come from one oracle process.
"""

from __future__ import annotations

import functools

import pytest
import torch

from neml2 import hit
from neml2.errors import HitError
from neml2.models import Model, Normality, build_model, model_section
from neml2.models.base import raise_if_failed

from .oracle import (  # noqa: F401
    Case,
    answers,
    check,
    check_by_differences,
    oracle_folder,
    parameter_jacobian_by_differences,
)
from .test_neml2_oracle import INPUTS, assert_agree

PLASTICITY = INPUTS / "plasticity"
F64 = torch.float64
#: Steps of the drive; one point, as NEML2 3.1.0's eager solve of each dominates the time.
STEPS = 20
F0 = 0.02
#: The driven files and their unknowns (each given as ``<name>~1`` of the next step).
DRIVEN = {
    "gtn_viscoplastic.i": ("plastic_strain", "equivalent_plastic_strain", "void_fraction"),
    "gtn_rate_independent.i": (
        "plastic_strain",
        "equivalent_plastic_strain",
        "void_fraction",
        "flow_rate",
    ),
}


def build(name: str) -> Model:
    return build_model(model_section(hit.load(PLASTICITY / name), "model"))


#: Two Mandel stresses with a tensile mean stress, two hardenings, two void fractions.
NORMALITY = Case(
    PLASTICITY / "gtn_normality.i",
    {
        "mandel_stress": torch.tensor(
            [[320.0, 150.0, 90.0, 40.0, -25.0, 60.0], [-80.0, 210.0, 130.0, 0.0, 75.0, -30.0]],
            dtype=F64,
        ),
        "isotropic_hardening": torch.tensor([20.0, 55.0], dtype=F64),
        "void_fraction": torch.tensor([0.02, 0.1], dtype=F64),
    },
)


def strain(step: int) -> torch.Tensor:
    """Triaxial tension with shear, ramped up for 14 steps, then unloaded by 60 % a step."""
    level = min(step, 14) - max(0, step - 14) * 0.6
    direction = torch.tensor([[1.0, 0.45, 0.35, 0.1, 0.0, 0.2]], dtype=F64)
    return 4e-4 * level * direction


@functools.cache
def drive(name: str) -> tuple[list[dict], list[dict], list[dict]]:
    """Our eager GTN model ``name`` over STEPS steps from a void fraction F0 (the other
    unknowns zero): the inputs, outputs and Jacobians of each step."""
    model = build(name)
    assert model.implicit
    state = {k: torch.zeros((1, *model.variable(k).shape), dtype=F64) for k in DRIVEN[name]}
    state["void_fraction"] += F0
    steps, outputs, jacobians = [], [], []
    for step in range(1, STEPS + 1):
        x = {
            "strain": strain(step),
            "t": torch.full((1,), 0.5 * step, dtype=F64),
            "t~1": torch.full((1,), 0.5 * (step - 1), dtype=F64),
            **{f"{k}~1": v for k, v in state.items()},
        }
        ev = model.evaluate(x, model.parameters, jacobian=True)  # one solve for both
        raise_if_failed(model.name, ev.status)
        steps.append(x)
        outputs.append(ev.outputs)
        jacobians.append(ev.jacobian)
        state = {k: ev.outputs[k] for k in state}
    return steps, outputs, jacobians


def step_cases(name: str) -> list[Case]:
    """One case per step, its point given to NEML2 as a batch of one: NEML2 3.1.0's eager
    Newton solve raises IndexError on an SR2 unknown at an unbatched point."""
    steps, _, _ = drive(name)
    return [Case(PLASTICITY / name, {k: v.unsqueeze(1) for k, v in x.items()}) for x in steps]


@pytest.fixture(scope="module")
def theirs(oracle_folder):  # noqa: F811 (the fixture imported above)
    """NEML2's answers: ``normality`` to NORMALITY, each driven file's to its steps."""
    cases = [NORMALITY, *(case for name in DRIVEN for case in step_cases(name))]
    answered = answers(oracle_folder, cases)
    first = iter(range(1, len(cases), STEPS))
    return {"normality": answered[0]} | {
        name: answered[start : start + STEPS] for name, start in zip(DRIVEN, first, strict=True)
    }


def test_normality_agrees_with_neml2(theirs: dict) -> None:
    model = NORMALITY.build()
    assert isinstance(model, Normality)
    assert [v.name for v in model.outputs] == [
        "flow_direction",
        "isotropic_hardening_direction",
        "void_direction",
    ]
    check(NORMALITY, theirs["normality"])


def test_normality_derivatives_by_differences() -> None:
    model = NORMALITY.build()
    check_by_differences(model, NORMALITY.inputs, "gtn_normality")
    parameter_jacobian_by_differences(model, NORMALITY.inputs, "gtn_normality")


def test_normality_is_the_gradient_of_its_function() -> None:
    """The outputs are the wrapped model's first derivatives: the GTN flow direction has a
    volumetric part, and the direction by the hardening is negative."""
    model = NORMALITY.build()
    out = model.forward(NORMALITY.inputs)
    surface = model.model.jacobian(NORMALITY.inputs)["yield_function"]
    torch.testing.assert_close(out["flow_direction"], surface["mandel_stress"], rtol=0, atol=0)
    assert float(out["flow_direction"][:, :3].sum(-1).min()) > 0.0
    assert float(out["isotropic_hardening_direction"].max()) < 0.0


def squeeze_points(value: object) -> object:
    """NEML2's answer for a point given as a batch of one, without that axis."""
    if isinstance(value, dict):
        return {k: squeeze_points(v) for k, v in value.items()}
    assert isinstance(value, torch.Tensor)
    assert value.shape[1] == 1
    return value.squeeze(1)


def without(blocks: dict, skip: tuple[str, ...]) -> dict:
    """The Jacobian blocks less those by ``skip`` (the flow rate's are all kept)."""
    return {
        of: {wrt: b for wrt, b in row.items() if of == "flow_rate" or wrt not in skip}
        for of, row in blocks.items()
    }


def compare_steps(name: str, theirs: list[dict], skip: tuple[str, ...] = ()) -> None:
    """Our drive of ``name`` agrees with NEML2's answers at every step, but for the blocks
    of the state and the stress by the inputs ``skip``."""
    _, outputs, jacobians = drive(name)
    assert len(theirs) == len(outputs) == STEPS
    for step, (out, jac, ref) in enumerate(zip(outputs, jacobians, theirs, strict=True)):
        what = f"{name} step {step + 1}"
        assert "error" not in ref, f"NEML2 refused {what}: {ref['error']}"
        assert_agree(out, squeeze_points(ref["outputs"]), f"{what} outputs")
        ref_jac = squeeze_points(ref["jacobian"])
        assert_agree(without(jac, skip), without(ref_jac, skip), f"{what} jacobian")


def test_gtn_viscoplastic_over_steps_agrees_with_neml2(theirs: dict) -> None:
    name = "gtn_viscoplastic.i"
    _, outputs, _ = drive(name)
    # elastic for four steps, then the matrix flows and the voids grow; the unloading
    # steps end elastic, the void fraction kept
    assert torch.equal(outputs[3]["void_fraction"], torch.full((1,), F0, dtype=F64))
    assert float(outputs[4]["equivalent_plastic_strain"].min()) > 1e-4
    assert float(outputs[13]["void_fraction"].min()) > 1.2 * F0
    assert torch.equal(outputs[-1]["void_fraction"], outputs[-2]["void_fraction"])
    compare_steps(name, theirs[name])


def test_gtn_rate_independent_over_steps_agrees_with_neml2(theirs: dict) -> None:
    """As the viscoplastic model, except the derivatives of the state and the stress by
    the times: the solution does not depend on them, and both implementations give
    zero up to round-off, a round-off of their own (the flow rate's are compared)."""
    name = "gtn_rate_independent.i"
    _, outputs, jacobians = drive(name)
    # elastic (no flow at all) for four steps, then on the yield surface while loading;
    # the unloading steps are elastic again
    assert torch.equal(outputs[3]["flow_rate"], torch.zeros(1, dtype=F64))
    assert float(outputs[4]["flow_rate"].min()) > 0.1
    assert float(outputs[13]["void_fraction"].min()) > 1.2 * F0
    assert torch.equal(outputs[-1]["flow_rate"], torch.zeros(1, dtype=F64))
    for step, (out, jac, ref) in enumerate(zip(outputs, jacobians, theirs[name], strict=True)):
        ref_jac = squeeze_points(ref["jacobian"])
        for of in ("stress", *DRIVEN["gtn_viscoplastic.i"]):
            bound = 1e-12 * (1.0 + float(out[of].abs().max()))
            for wrt in ("t", "t~1"):
                for block in (jac[of][wrt], ref_jac[of][wrt]):
                    assert float(block.abs().max()) < bound, f"step {step + 1} d{of}/d{wrt}"
    compare_steps(name, theirs[name], skip=("t", "t~1"))


def test_gtn_parameter_jacobian_by_differences() -> None:
    """The parameter Jacobian of the implicit model at a plastic step, which holds
    Normality's (mixed second derivatives of the GTN yield function by its inputs and
    parameters), against central differences of the solve. The step is relative to the
    parameter (1e-5 of it, 1e-9 for the zero offset of the elastic strain, which is a
    strain): a strain moved by oracle.py's 1e-6 bends the solution too much."""
    steps, outputs, _ = drive("gtn_viscoplastic.i")
    x = steps[9]
    assert float(outputs[9]["equivalent_plastic_strain"].min()) > 1e-3
    model = build("gtn_viscoplastic.i")
    assert {"gtn.yield_stress", "gtn.q1", "gtn.q2", "gtn.q3"} <= set(model.parameters)
    pjac = model.param_jacobian(x)
    for name, value in list(model.parameters.items()):
        flat = value.reshape(-1)
        for j in range(flat.numel()):
            h = 1e-5 * float(flat[j].abs()) or 1e-9
            results = []
            for step in (h, -h):
                moved = flat.clone()
                moved[j] += step
                model.parameters[name] = moved.reshape(value.shape)
                results.append(model.forward(x))
            model.parameters[name] = value
            for out, row in pjac.items():
                column = row[name].reshape(*row[name].shape[: row[name].dim() - value.dim()], -1)
                expected = (results[0][out] - results[1][out]) / (2 * h)
                torch.testing.assert_close(
                    column[..., j],
                    expected,
                    rtol=1e-5,
                    atol=1e-6 * float(expected.abs().max()),
                    msg=f"d{out}/d{name}[{j}]",
                )


def test_normality_kernels_export() -> None:
    """Normality's Jacobian graph exports (torch.export, dynamic batch, the parameters
    graph inputs) and gives what the eager one does. Normality computes every second
    derivative, by inputs and parameters, whichever graph asks, so this one graph
    traces them all."""
    from neml2.compile import Graph, Selection

    model = NORMALITY.build()
    x = NORMALITY.inputs
    pairs = [(o.name, i.name) for o in model.outputs for i in model.inputs]
    sel = Selection(pairs, list(model.parameters))
    module = Graph(model, "jacobian", sel)
    batch = torch.export.Dim("batch", min=0)
    shapes = tuple({0: batch} if s["role"] == "input" else None for s in module.args)
    args = tuple(
        x[s["name"]] if s["role"] == "input" else model.parameters[s["name"]] for s in module.args
    )
    program = torch.export.export(module, args, dynamic_shapes=(shapes,), strict=False)
    results = module(*args)
    assert len(results) == len(pairs)
    for a, b in zip(program.module()(*args), results, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=0.0)


SURFACE = """
[Models]
  [von_mises]
    type = SR2Invariant
    invariant_type = VONMISES
    tensor = mandel_stress
    invariant = flow_invariant
  []
  [pressure]
    type = SR2Invariant
    invariant_type = I1
    tensor = mandel_stress
    invariant = poro_invariant
  []
  [gtn]
    type = GTNYieldFunction
    yield_stress = 250
    q1 = 1.5
    q2 = 1.0
    q3 = 2.25
  []
  [surface]
    type = ComposedModel
    models = 'von_mises pressure gtn'
  []
  [sum]
    type = ScalarLinearCombination
    from = 'flow_invariant poro_invariant'
    to = total
  []
  [summed]
    type = ComposedModel
    models = 'von_mises pressure sum'
  []
  [model]
    type = Normality
    BODY
  []
[]
"""


def normality(body: str) -> str:
    """A Normality block ``model`` with ``body`` (options separated by ``;``)."""
    return SURFACE.replace("BODY", "\n    ".join(part.strip() for part in body.split(";")))


FUNCTION = "function = yield_function"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (f"{FUNCTION}; from = mandel_stress; to = N", "missing required parameter 'model'"),
        ("model = surface; from = mandel_stress; to = N", "missing required parameter 'function'"),
        (f"model = nowhere; {FUNCTION}; from = mandel_stress; to = N", r"no \[Models/nowhere\]"),
        ("model = model; function = f; from = a; to = b", "is this model itself"),
        (
            "model = surface; function = flow_invariant; from = mandel_stress; to = N",
            "'flow_invariant' is not an output of model 'surface'",
        ),
        (
            "model = von_mises; function = flow_invariant; from = stress; to = N",
            "'stress' is not an input of model 'von_mises'",
        ),
        (f"model = surface; {FUNCTION}; to = N", "'from': expected at least one"),
        (
            f"model = surface; {FUNCTION}; from = 'mandel_stress void_fraction'; to = N",
            "1 names for 2 variables",
        ),
        (
            f"model = surface; {FUNCTION}; from = 'mandel_stress mandel_stress'; to = 'N M'",
            "'mandel_stress' is listed twice",
        ),
        (
            f"model = surface; {FUNCTION}; from = mandel_stress; to = void_fraction",
            "'void_fraction' is an input of model 'surface'",
        ),
        (
            "model = summed; function = total; from = mandel_stress; to = N",
            "ScalarLinearCombination 'sum' in 'summed' has no second derivatives",
        ),
    ],
)
def test_normality_refuses(body: str, message: str) -> None:
    text = normality(body)
    with pytest.raises(HitError, match=message):
        build_model(model_section(hit.parse(text, "f.i"), "model"))


ELASTIC = """
  [elastic]
    type = LinearIsotropicElasticity
    coefficients = '1 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
  [model]"""


def test_normality_refuses_a_non_scalar_function() -> None:
    text = normality("model = elastic; function = stress; from = strain; to = N")
    text = text.replace("\n  [model]", ELASTIC, 1)
    with pytest.raises(HitError, match="'stress' is not a Scalar"):
        build_model(model_section(hit.parse(text, "f.i"), "model"))
