"""Elasticity tensors, anisotropic elasticity, kinematics and eigenstrains against NEML2 3.1.0.

Every file of tests/neml2_inputs/elasticity is evaluated by NEML2 (one oracle process
for the module) and by our eager model; values and Jacobians agree at rtol 1e-8. The
parameter Jacobians, which NEML2 does not report, are checked against central
differences of our forward, and one file per type is exported with torch.export.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

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

FOLDER = INPUTS / "elasticity"
F64 = torch.float64


def f(name: str) -> object:
    return FOLDER / f"{name}.i"


def sr2(seed: int, batch: int, scale: float = 1.0) -> torch.Tensor:
    """A batch of Mandel vectors, reproducible."""
    g = torch.Generator().manual_seed(seed)
    return scale * torch.randn(batch, 6, generator=g, dtype=F64)


def t(*values: float) -> torch.Tensor:
    """A batch of scalars."""
    return torch.tensor(values, dtype=F64)


def r2(seed: int, batch: int, scale: float = 0.1) -> torch.Tensor:
    """Deformation gradients ``I + scale * noise`` (positive determinants), reproducible."""
    g = torch.Generator().manual_seed(seed)
    return torch.eye(3, dtype=F64) + scale * torch.randn(batch, 3, 3, generator=g, dtype=F64)


def mrp(batch: int) -> torch.Tensor:
    """Orientations: the identity, small and large rotations, one near a half turn."""
    r = torch.zeros(batch, 3, dtype=F64)
    g = torch.Generator().manual_seed(11)
    r[1:] = 0.6 * torch.randn(batch - 1, 3, generator=g, dtype=F64)
    r[-1] = torch.tensor([0.0, 0.0, 0.95], dtype=F64)
    return r


#: NEML2 3.1.0 refuses these files (NotImplementedError: it reads only the E-nu and K-G
#: pairs); ours are compared with the same tensor given by E and nu instead.
REFUSED = {"isotropic_elasticity_tensor_lambda_G": (200e3, 0.25)}

CASES = [
    Case(f("isotropic_elasticity_tensor")),
    Case(f("isotropic_elasticity_tensor_nu_E")),
    Case(f("isotropic_elasticity_tensor_K_G")),
    Case(f("isotropic_elasticity_tensor_G_K")),
    Case(f("isotropic_elasticity_tensor_lambda_G")),
    Case(f("cubic_elasticity_tensor")),
    Case(f("cubic_elasticity_tensor_permuted")),
    Case(f("general_elasticity"), {"strain": sr2(1, 5, 1e-3), "orientation": mrp(5)}),
    Case(
        f("general_elasticity_tensors"),
        {"elastic_strain": sr2(2, 4, 1e-3), "grain_orientation": mrp(4)},
    ),
    Case(f("green_lagrange_strain"), {"deformation_gradient": r2(3, 4)}),
    Case(f("green_lagrange_strain_named"), {"F": r2(4, 3, 0.3)}),
    Case(f("thermal_deformation_jacobian"), {"temperature": t(293.15, 400.0, 1200.0, 77.0)}),
    Case(f("thermal_deformation_jacobian_named"), {"T": t(600.0, 300.0, 950.0)}),
    Case(f("swelling_and_phase_change_deformation_jacobian"), {"fluid_fraction": t(0, 0.3, 1)}),
    Case(f("swelling_and_phase_change_deformation_jacobian_named"), {"phi": t(0.0, 0.5, 0.2, 0.9)}),
    Case(
        f("volume_adjust_deformation_gradient"),
        {"input": r2(5, 4), "jacobian": t(1.0, 0.9, 1.2, 1.05)},
    ),
    Case(
        f("volume_adjust_deformation_gradient_named"),
        {"F": r2(6, 3, 0.2), "J": t(0.8, 1.0, 1.5)},
    ),
    Case(
        f("kinematics_composed"),
        {
            "deformation_gradient": r2(7, 4),
            "temperature": t(300.0, 500.0, 800.0, 250.0),
            "fluid_fraction": t(0.0, 0.2, 0.5, 1.0),
            "orientation": mrp(4),
        },
    ),
    Case(
        f("phase_transformation_eigenstrain"),
        {"phase_fraction": t(0.0, 0.4, 1.0), "volume_fraction_change": t(0.03, -0.02, 0.05)},
    ),
    Case(
        f("phase_transformation_eigenstrain_named"),
        {"martensite": t(0.7, 0.1), "dV": t(0.0, 0.04)},
    ),
    Case(f("volume_change_eigenstrain"), {"volume": t(2.5, 2.7, 2.2, 3.1)}),
    Case(f("volume_change_eigenstrain_named"), {"cell_volume": t(0.8, 0.85, 0.7)}),
    Case(
        f("eigenstrain_composed"),
        {
            "strain": sr2(8, 3, 1e-3),
            "phase_fraction": t(0.0, 0.5, 0.9),
            "volume_fraction_change": t(0.02, 0.01, -0.03),
            "volume": t(1.2, 1.25, 1.1),
        },
    ),
]


@pytest.mark.parametrize(
    ("name", "parameters"),
    [
        ("isotropic_elasticity_tensor", ["E", "nu"]),
        ("isotropic_elasticity_tensor_nu_E", ["E", "nu"]),
        ("isotropic_elasticity_tensor_G_K", ["K", "G"]),
        ("isotropic_elasticity_tensor_lambda_G", ["G", "lambda"]),
        ("cubic_elasticity_tensor_permuted", ["G", "E", "nu"]),
        ("general_elasticity", ["elastic_stiffness_tensor"]),
        # NEML2 lets only these be promoted; reference temperatures and volumes, the
        # swelling coefficient and the volume difference are constants
        ("thermal_deformation_jacobian", ["CTE"]),
        ("swelling_and_phase_change_deformation_jacobian", ["phase_fraction"]),
        ("volume_change_eigenstrain", []),
    ],
)
def test_parameters_in_neml2_order(name: str, parameters: list[str]) -> None:
    """NEML2 declares the constants in a fixed order, whatever the file's order."""
    model = next(c for c in CASES if c.id == name).build()
    assert list(model.parameters) == [f"model.{p}" for p in parameters]


def moved(x: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The inputs moved a little, away from the identity orientation."""
    return {k: v + 0.01237 * (1.0 + v.abs()) for k, v in x.items()}


WITH_PARAMETERS = [c for c in CASES if c.build().parameters]


@pytest.mark.parametrize("case", WITH_PARAMETERS, ids=[c.id for c in WITH_PARAMETERS])
def test_parameter_jacobian_by_differences(case: Case) -> None:
    parameter_jacobian_by_differences(case.build(), moved(dict(case.inputs)), case.id, atol=1e-7)


def build(body: str) -> Model:
    text = f"[Models]\n [model]\n {body}\n []\n[]\n"
    return build_model(hit.parse(text, "f.i").children["Models"].children["model"])


def test_stiffness_as_numbers_equals_the_tensors_block() -> None:
    """36 numbers in place are the Mandel matrix row by row. NEML2 3.1.0 reads them as a
    (36,) tensor and fails in the contraction (size mismatch), so this form is checked
    against the [Tensors] form of the same matrix, which NEML2 evaluates."""
    case = next(c for c in CASES if c.id == "general_elasticity")
    reference = case.build()
    T = reference.parameters["model.elastic_stiffness_tensor"]
    numbers = " ".join(repr(float(v)) for v in T.reshape(-1))
    model = build(f"type = GeneralElasticity\n elastic_stiffness_tensor = '{numbers}'")
    x = dict(case.inputs)
    torch.testing.assert_close(model.forward(x), reference.forward(x), rtol=0, atol=0)


def test_general_elasticity_identity_orientation_is_the_plain_contraction() -> None:
    case = next(c for c in CASES if c.id == "general_elasticity")
    model = case.build()
    T = model.parameters["model.elastic_stiffness_tensor"]
    strain = sr2(5, 3)
    stress = model.forward({"strain": strain, "orientation": torch.zeros(3, 3, dtype=F64)})
    torch.testing.assert_close(stress["stress"], strain @ T.T, rtol=1e-14, atol=0)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "type = IsotropicElasticityTensor\n coefficients = '1 2'\n"
            " coefficient_types = 'YOUNGS_MODULUS P_WAVE_MODULUS'",
            "unknown coefficient type 'P_WAVE_MODULUS'; expected two of",
        ),
        (
            "type = IsotropicElasticityTensor\n coefficients = '1 2 3'\n"
            " coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'",
            "parameter 'coefficients': expected 2 values, got 3",
        ),
        (
            "type = CubicElasticityTensor\n coefficients = '1 2 3'\n"
            " coefficient_types = 'SHEAR_MODULUS YOUNGS_MODULUS BULK_MODULUS'",
            "unknown coefficient type 'BULK_MODULUS'; expected three of: YOUNGS_MODULUS, "
            "POISSONS_RATIO, SHEAR_MODULUS",
        ),
        (
            "type = CubicElasticityTensor\n coefficients = '1 2 3'\n"
            " coefficient_types = 'SHEAR_MODULUS YOUNGS_MODULUS SHEAR_MODULUS'",
            "'SHEAR_MODULUS' is given twice; expected three different",
        ),
        # a constant (not a parameter NEML2 lets a variable give) names no [Tensors] block
        (
            "type = VolumeChangeEigenstrain\n reference_volume = x",
            "no \\[Tensors\\] block named 'x'",
        ),
        ("type = GeneralElasticity\n elastic_stiffness_tensor = '1 2 3'", "has 36 components"),
        (
            "type = GeneralElasticity\n elastic_stiffness_tensor = '0 0 0 0 0 0 0 0 0 0 0 0 0 "
            "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0'\n stress = strain",
            "already used",
        ),
        ("type = ThermalDeformationJacobian\n CTE = 1e-5", "'reference_temperature'"),
        (
            "type = VolumeChangeEigenstrain\n reference_volume = V0",
            "no \\[Tensors\\] block named 'V0'",
        ),
        (
            "type = SwellingAndPhaseChangeDeformationJacobian\n phase_fraction = '0.1 0.2'\n"
            " swelling_coefficient = 0\n reference_volume_difference = 0",
            "a Scalar has 1 component, got 2 numbers",
        ),
        ("type = GreenLagrangeStrain\n strain = deformation_gradient", "already used"),
    ],
)
def test_refuses(body: str, message: str) -> None:
    with pytest.raises(HitError, match=message):
        build(body)


#: One file per type. Their kernels must export (torch.export with a dynamic batch), the
#: step before AOTInductor, with every parameter a graph input: one export holds them all,
#: which costs a fraction of one export per type.
EXPORTED = (
    "isotropic_elasticity_tensor",
    "cubic_elasticity_tensor",
    "general_elasticity",
    "green_lagrange_strain",
    "thermal_deformation_jacobian",
    "swelling_and_phase_change_deformation_jacobian",
    "volume_adjust_deformation_gradient",
    "phase_transformation_eigenstrain",
    "volume_change_eigenstrain",
)


class EveryKernel(torch.nn.Module):
    """Outputs, Jacobians and parameter Jacobians of several models, from flat arguments:
    ``specs[k] = (model index, "input" or "parameter", name)`` says what argument k is."""

    def __init__(self, models: list[Model], specs: list[tuple[int, str, str]]) -> None:
        super().__init__()
        self.models = models
        self.specs = specs

    def forward(self, *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
        results: list[torch.Tensor] = []
        for index, model in enumerate(self.models):
            pairs = zip(self.specs, tensors, strict=True)
            given = [(role, name, t) for (i, role, name), t in pairs if i == index]
            x = {name: t for role, name, t in given if role == "input"}
            p = {name: t for role, name, t in given if role == "parameter"}
            ev = model.evaluate(x, p, jacobian=bool(x), param_jacobian=True)
            results += [ev.outputs[o.name] for o in model.outputs]
            for blocks in (ev.jacobian, ev.param_jacobian):
                results += [block for row in blocks.values() for block in row.values()]
        return tuple(results)


def test_kernels_export() -> None:
    batch = 2
    models, specs, args = [], [], []
    for index, name in enumerate(EXPORTED):
        case = next(c for c in CASES if c.id == name)
        model = case.build()
        models.append(model)
        for var in model.inputs:
            specs.append((index, "input", var.name))
            args.append(case.inputs[var.name][:batch])
        for param, value in model.parameters.items():
            specs.append((index, "parameter", param))
            args.append(value)
    module = EveryKernel(models, specs)
    dim = torch.export.Dim("batch", min=0)
    shapes = tuple({0: dim} if role == "input" else None for _, role, _ in specs)
    program = torch.export.export(module, tuple(args), dynamic_shapes=(shapes,), strict=False)
    exported, eager = program.module()(*args), module(*args)
    assert len(exported) == len(eager) >= 2 * len(EXPORTED)
    for a, b in zip(exported, eager, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=0.0)


@pytest.fixture(scope="module", autouse=True)
def oracle_running(oracle_folder):  # noqa: F811 (the fixture imported above)
    """NEML2's answers, asked for when the module starts: the oracle process runs on its
    own while the tests above (the export above all) run here, so that its start-up
    (importing NEML2) costs the module no time. Tests that need the answers come last."""
    with ThreadPoolExecutor(1) as pool:
        yield pool.submit(answers, oracle_folder, CASES)


@pytest.fixture(scope="module")
def theirs(oracle_running: Future) -> list[dict]:
    return oracle_running.result()


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c.id for c in CASES])
def test_agrees_with_neml2(index: int, theirs: list[dict]) -> None:
    case = CASES[index]
    if case.id in REFUSED:
        assert "NotImplementedError" in theirs[index].get("error", ""), theirs[index]
        E, nu = REFUSED[case.id]
        reference = build(
            "type = IsotropicElasticityTensor\n coefficients = "
            f"'{E} {nu}'\n coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'"
        )
        (ours,) = case.build().forward({}).values()
        torch.testing.assert_close(ours, reference.forward({})["model"], rtol=1e-12, atol=0)
        return
    check(case, theirs[index])
