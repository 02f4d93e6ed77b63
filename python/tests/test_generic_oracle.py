"""Generic blocks, conversions and rotation updates against NEML2 3.1.0.

Each input file of tests/neml2_inputs/generic is evaluated at a few random points (values
in each model's valid range) by our eager model and by NEML2; outputs and full Jacobians
agree at rtol 1e-8. Mistakes in the options that only these types have are one clear
HitError naming the key.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from neml2 import hit
from neml2.errors import HitError
from neml2.models import build_model
from neml2.models.generic import TYPES
from neml2.tensors import base_shape

from .oracle import (  # noqa: F401
    Case,
    answers,
    check,
    oracle_folder,
    parameter_jacobian_by_differences,
)

INPUTS = Path(__file__).resolve().parents[2] / "tests" / "neml2_inputs" / "generic"
F64 = torch.float64
BATCH = 5
_g = torch.Generator().manual_seed(20240611)


def randn(*shape: int, scale: float = 1.0) -> torch.Tensor:
    return scale * torch.randn(*shape, dtype=F64, generator=_g)


def uniform(low: float, high: float, *shape: int) -> torch.Tensor:
    return low + (high - low) * torch.rand(*shape, dtype=F64, generator=_g)


def invertible(n: int = BATCH) -> torch.Tensor:
    """Well-conditioned full tensors: the identity plus a perturbation."""
    return torch.eye(3, dtype=F64) + randn(n, 3, 3, scale=0.3)


def times(n: int = BATCH) -> tuple[torch.Tensor, torch.Tensor]:
    """``t`` and ``t~1`` with ``t > t~1``."""
    old = uniform(0.0, 1.0, n)
    return old + uniform(0.1, 0.5, n), old


#: Per file: how to draw its inputs (a dict of variable -> tensor).
Draw = Callable[[], dict[str, torch.Tensor]]


def _typed(t: str) -> Callable[[], torch.Tensor]:
    if t == "MillerIndex":
        return lambda: torch.randint(-3, 4, (BATCH, 3), generator=_g).to(F64)
    if t == "MRP":
        return lambda: randn(BATCH, 3, scale=0.3)
    return lambda: randn(BATCH, *base_shape(t))


def _time_case(names: tuple[str, ...], time: str, make: Callable[[], torch.Tensor]) -> Draw:
    def draw() -> dict[str, torch.Tensor]:
        t, t_old = times()
        return {**{n: make() for n in names}, time: t, f"{time}~1": t_old}

    return draw


DRAWS: dict[str, Draw] = {}
for _t in TYPES:
    _low = _t.lower()
    _make = _typed(_t)
    _named = _t not in ("Scalar", "SR2")
    DRAWS[f"copy_{_low}"] = (
        (lambda m=_make: {"a": m()}) if _named else (lambda m=_make: {"from": m()})
    )
    DRAWS[f"constant_parameter_{_low}"] = dict
    DRAWS[f"input_parameter_{_low}"] = (
        (lambda m=_make: {"x": m()}) if _t in ("R2", "WR2") else (lambda m=_make: {"variable": m()})
    )
    DRAWS[f"parameter_to_variable_{_low}"] = dict

DRAWS.update(
    {
        "variable_rate_vec": _time_case(("x", "x~1"), "t", lambda: randn(BATCH, 3)),
        "variable_rate_r2": _time_case(("F", "F~1"), "time", lambda: randn(BATCH, 3, 3)),
        "backward_euler_vec": _time_case(("x", "x~1", "x_rate"), "t", lambda: randn(BATCH, 3)),
        "backward_euler_r2": _time_case(("F", "F~1", "L"), "t", lambda: randn(BATCH, 3, 3)),
        "forward_euler_r2": _time_case(("F0", "L"), "t", lambda: randn(BATCH, 3, 3)),
        "composed_constant_parameter": lambda: {
            "x": uniform(0.5, 2.0, BATCH),
            "v0~1": randn(BATCH, 3),
            **dict(zip(("t", "t~1"), times(), strict=True)),
        },
        "scalar_multiplication": lambda: {"a": randn(BATCH), "b": randn(BATCH)},
        "scalar_multiplication_reciprocal": lambda: {
            "a": uniform(0.5, 2.0, BATCH),
            "b": randn(BATCH),
            "c": -uniform(0.5, 2.0, BATCH),
        },
        "scalar_multiplication_all_reciprocal": lambda: {
            "a": uniform(0.5, 2.0, BATCH),
            "b": uniform(0.5, 2.0, BATCH),
        },
        "r2_multiplication": lambda: {"F": randn(BATCH, 3, 3), "G": randn(BATCH, 3, 3)},
        "r2_multiplication_invert_a": lambda: {"A": invertible(), "B": randn(BATCH, 3, 3)},
        "r2_multiplication_transpose": lambda: {"A": randn(BATCH, 3, 3), "B": invertible()},
        "r2_determinant": lambda: {"F": randn(BATCH, 3, 3)},
        "sr2_determinant": lambda: {"input": randn(BATCH, 6)},
        "r2_to_sr2": lambda: {"L": randn(BATCH, 3, 3)},
        "sr2_to_r2": lambda: {"input": randn(BATCH, 6)},
        "r2_to_wr2": lambda: {"L": randn(BATCH, 3, 3)},
        "scalar_to_diagonal_sr2": lambda: {"p": randn(BATCH)},
        "vec_components": lambda: {"v": randn(BATCH, 3)},
        "rotation_matrix": lambda: {"orientation": randn(BATCH, 3, scale=0.4)},
        "wr2_explicit": lambda: {
            "orientation~1": randn(BATCH, 3, scale=0.3),
            "orientation_rate": randn(BATCH, 3, scale=0.5),
            **dict(zip(("t", "t~1"), times(), strict=True)),
        },
        "wr2_explicit_named": lambda: {
            "Q~1": randn(BATCH, 3, scale=0.3),
            "spin": randn(BATCH, 3, scale=0.5),
            **dict(zip(("time", "time~1"), times(), strict=True)),
        },
        "wr2_implicit": lambda: {
            "orientation": randn(BATCH, 3, scale=0.3),
            "orientation~1": randn(BATCH, 3, scale=0.3),
            "spin": randn(BATCH, 3, scale=0.5),
            **dict(zip(("t", "t~1"), times(), strict=True)),
        },
    }
)


def _small_spin() -> dict[str, torch.Tensor]:
    """Spin increments so small that NEML2's exponential map takes its Taylor branch
    (|w|^2 below about 6e-6) at some points and the exact formula at others."""
    t, t_old = times()
    rate = randn(BATCH, 3)
    rate = (
        rate
        / rate.norm(dim=-1, keepdim=True)
        * torch.tensor([1e-4, 1e-3, 2e-3, 5e-3, 1e-2])[:, None].to(F64)
    )
    return {
        "orientation~1": randn(BATCH, 3, scale=0.3),
        "orientation_rate": rate / (t - t_old)[:, None],
        "t": t,
        "t~1": t_old,
    }


#: The Scalar and SR2 time integration files of tests/neml2_inputs (time_integration.py
#: builds every type's variant from one machinery): checked here again after its change.
SCALAR_SR2_TIME = [
    INPUTS.parent / f"{family}_{t}.i"
    for family in ("backward_euler", "forward_euler", "variable_rate")
    for t in ("scalar", "sr2")
]


def _time_inputs(file: Path) -> dict[str, torch.Tensor]:
    """Random inputs for a time integration file: ``t > t~1`` (or ``time``), others any."""
    model = build_model(hit.load(file).children["Models"].children["model"])
    t, t_old = times()
    out = {}
    for var in model.inputs:
        if var.name in ("t", "time"):
            out[var.name] = t
        elif var.name in ("t~1", "time~1"):
            out[var.name] = t_old
        else:
            out[var.name] = randn(BATCH, *var.shape)
    return out


CASES = [
    Case(INPUTS / f"{stem}.i", draw(), batch=BATCH) for stem, draw in sorted(DRAWS.items())
] + [Case(INPUTS / "wr2_explicit.i", _small_spin())]
CASES += [Case(f, _time_inputs(f)) for f in SCALAR_SR2_TIME]


def test_every_file_has_a_case() -> None:
    assert sorted(p.stem for p in INPUTS.glob("*.i")) == sorted(DRAWS)


@pytest.fixture(scope="module")
def theirs(oracle_folder: Path) -> list[dict]:  # noqa: F811
    return answers(oracle_folder, CASES)


#: NEML2 3.1.0 keeps an R2 or SSR4 value written as numbers in place flat, ``(9,)`` or
#: ``(36,)``, instead of ``(3, 3)`` or ``(6, 6)``: there only the row-major layout differs.
FLAT_IN_NEML2 = {
    f"{family}_{t.lower()}"
    for family in ("constant_parameter", "parameter_to_variable")
    for t in ("R2", "SSR4")
}


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c.id for c in CASES])
def test_agrees_with_neml2(index: int, theirs: list[dict]) -> None:
    case, answer = CASES[index], theirs[index]
    if case.id in FLAT_IN_NEML2:
        (var,) = case.build().outputs
        flat = answer["outputs"][var.name]
        assert tuple(flat.shape) == (case.batch, var.size)
        answer = {**answer, "outputs": {var.name: flat.reshape(case.batch, *var.shape)}}
    check(case, answer)


@pytest.mark.parametrize(
    "stem",
    [
        "composed_constant_parameter",
        "constant_parameter_sr2",
        "parameter_to_variable_r2",
        "scalar_multiplication_reciprocal",
    ],
)
def test_parameter_derivatives_by_differences(stem: str) -> None:
    """d output / d parameter (which NEML2's oracle does not give) by central differences."""
    case = next(c for c in CASES if c.id == stem)
    x = {k: v.clone() for k, v in case.inputs.items()}
    parameter_jacobian_by_differences(case.build(), x, case.id, atol=1e-6, scaled=False)


def build(body: str):
    """The model of a one-block input file whose ``[model]`` holds ``body``."""
    text = f"[Models]\n  [model]\n{body}  []\n[]\n"
    return build_model(hit.parse(text, "m.i").children["Models"].children["model"])


@pytest.mark.parametrize(
    ("body", "key", "message"),
    [
        ("type = VecComponents\nto = 'a b'\n", "to", "expected 3 variable names"),
        ("type = VecComponents\nfrom = 'v'\n", "to", "missing required parameter 'to'"),
        ("type = VecComponents\nto = 'a b a'\n", "to", "'a' is used twice"),
        ("type = ScalarMultiplication\nto = 'p'\n", "from", "missing required parameter"),
        (
            "type = ScalarMultiplication\nfrom = 'a b c'\nreciprocal = 'true false'\n",
            "reciprocal",
            "expected 1 or 3 booleans",
        ),
        (
            "type = ScalarMultiplication\nfrom = 'a b'\nreciprocal = 'true maybe'\n",
            "reciprocal",
            "got 'maybe'",
        ),
        ("type = ScalarMultiplication\nfrom = 'a b'\nto = 'b'\n", "to", "also an input"),
        ("type = R2Multiplication\ninvert_A = 'maybe'\n", "invert_A", "expected a boolean"),
        ("type = VecConstantParameter\n", "value", "missing required parameter 'value'"),
        ("type = SR2ConstantParameter\nvalue = '1 2 3'\n", "value", "has 6 components"),
        ("type = R2ParameterToVariable\nto = 'q'\n", "from", "missing required parameter"),
        ("type = MRPParameterToVariable\nfrom = '1 2'\n", "from", "has 3 components"),
        (
            "type = WR2ExplicitExponentialTimeIntegration\nvariable = 'r'\nold_variable = 'q'\n",
            "old_variable",
            "unknown parameter 'old_variable'",
        ),
        (
            "type = VecForwardEulerTimeIntegration\nvariable = 'x'\n",
            "type",
            "unknown model type",
        ),
    ],
)
def test_option_errors_name_the_key(body: str, key: str, message: str) -> None:
    indented = "".join(f"    {line}\n" for line in body.splitlines())
    with pytest.raises(HitError) as error:
        build(indented)
    text = str(error.value)
    assert message in text, text
    assert key in text, text
