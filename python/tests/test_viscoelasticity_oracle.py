"""Viscoelastic elements against NEML2 3.1.0.

Every file of tests/neml2_inputs/viscoelasticity (one per element type with its default
names, one with every name changed) is evaluated by NEML2 (one oracle process for the
elements) and by our eager model at a batch of random strains; values and Jacobians
agree at rtol 1e-8. The parameter Jacobians, which NEML2 does not report, are checked
against central differences of our forward, and each type's kernels export.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest
import torch

from neml2 import hit
from neml2.errors import HitError
from neml2.models import Model, build_model

from .oracle import Case, answers, check, oracle_folder  # noqa: F401
from .test_neml2_oracle import INPUTS

FOLDER = INPUTS / "viscoelasticity"
F64 = torch.float64
BATCH = 4


def sr2(seed: int, scale: float) -> torch.Tensor:
    """A batch of Mandel vectors, reproducible."""
    g = torch.Generator().manual_seed(seed)
    return scale * torch.randn(BATCH, 6, generator=g, dtype=F64)


#: The scale of each variable: strains 1e-3, their rates 1e-4, stresses 1e2.
def scale_of(name: str) -> float:
    lowered = name.lower()
    if "stress" in lowered or lowered in ("s", "sigma"):
        return 100.0
    return 1e-4 if lowered.endswith(("_rate", "_dot")) else 1e-3


def case(file: str) -> Case:
    """The file at random values of each of its inputs."""
    path = FOLDER / file
    model = Case(path).build()
    inputs = {v.name: sr2(10 + i, scale_of(v.name)) for i, v in enumerate(model.inputs)}
    return Case(path, inputs)


FILES = (
    "linear_dashpot.i",
    "linear_dashpot_named.i",
    "kelvin_voigt.i",
    "kelvin_voigt_named.i",
    "zener.i",
    "zener_named.i",
    "burgers.i",
    "burgers_named.i",
    "wiechert.i",
    "wiechert_named.i",
)
CASES = [case(f) for f in FILES]

#: The variables of each named file, as NEML2 names them.
NAMES = {
    "linear_dashpot_named": (["branch_stress"], ["creep_rate"]),
    "kelvin_voigt_named": (["E", "E_rate"], ["S"]),
    "zener_named": (["eps", "eps_v"], ["sigma", "eps_v_dot"]),
    "burgers_named": (["total", "creep", "delayed"], ["S", "creep_rate", "delayed_dot"]),
    "wiechert_named": (["e", "fast", "slow"], ["s", "fast_dot", "slow_rate"]),
}


@pytest.fixture(scope="module")
def theirs(oracle_folder):  # noqa: F811 (the fixture imported above)
    return answers(oracle_folder, CASES)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c.id for c in CASES])
def test_agrees_with_neml2(index: int, theirs: list[dict]) -> None:
    case = CASES[index]
    check(case, theirs[index])
    model = case.build()
    if case.id in NAMES:
        assert ([v.name for v in model.inputs], [v.name for v in model.outputs]) == NAMES[case.id]


def parameter_jacobian_by_differences(model: Model, x: Mapping[str, torch.Tensor]) -> None:
    """Every block of ``model.param_jacobian`` at ``x`` agrees with central differences of
    its forward in that parameter (rtol 1e-6)."""
    pjac = model.param_jacobian(dict(x))
    for name, value in list(model.parameters.items()):
        h = 1e-6 * max(1.0, float(value.abs()))
        results = []
        for step in (h, -h):
            model.parameters[name] = value + step
            results.append(model.forward(dict(x)))
        model.parameters[name] = value
        for out, row in pjac.items():
            expected = (results[0][out] - results[1][out]) / (2 * h)
            torch.testing.assert_close(
                row[name],
                expected,
                rtol=1e-6,
                atol=1e-7 * max(1.0, float(expected.abs().max())),
                msg=f"d{out}/d{name}",
            )


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c.id for c in CASES])
def test_parameter_jacobian_by_differences(index: int) -> None:
    case = CASES[index]
    model = case.build()
    assert all(p.startswith("model.") for p in model.parameters)
    parameter_jacobian_by_differences(model, case.inputs)


def build(text: str) -> Model:
    return build_model(hit.parse(text, "f.i").children["Models"].children["model"])


@pytest.mark.parametrize(
    ("body", "message"),
    [
        # NEML2 3.1.0 refuses each of these too: a missing parameter, an unknown option
        ("type = ZenerElement\n equilibrium_modulus = 1\n maxwell_modulus = 2", "maxwell_visc"),
        ("type = KelvinVoigtElement\n modulus = 1\n viscosity = 2\n strain_rate = r", "unknown"),
        ("type = LinearDashpot\n viscosity = 2\n strain = e", "unknown parameter 'strain'"),
        # a parameter given as a variable name is not supported
        ("type = LinearDashpot\n viscosity = eta", "viscosity"),
    ],
)
def test_refuses(body: str, message: str) -> None:
    with pytest.raises(HitError, match=message):
        build(f"[Models]\n [model]\n {body}\n []\n[]\n")


def exports(case: Case) -> None:
    """The model's Jacobian and parameter-Jacobian graphs export (torch.export with a
    dynamic batch, every parameter a graph input) and agree with the eager graphs."""
    from neml2.compile import Graph, Selection

    model = case.build()
    pairs = [(o.name, i.name) for o in model.outputs for i in model.inputs]
    sel = Selection(pairs, list(model.parameters))
    for graph in ("jacobian", "param_jacobian"):
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


def test_kernels_export() -> None:
    """One type with every kind of block (scaled identities, strain-valued parameter blocks)."""
    exports(next(c for c in CASES if c.id == "wiechert_named"))
