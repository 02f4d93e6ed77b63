"""J2Viscoplasticity against a separately written scalar return mapping, finite differences,
and its convergence contract (ConvergenceError; a halved time step converges)."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pytest
import torch

from neml2 import hit
from neml2.errors import ConvergenceError, HitError, Neml2Error
from neml2.models import J2Viscoplasticity, LinearIsotropicElasticity, Model, build_model

from .conftest import FIXTURES
from .oracle import parameter_differences

F64 = torch.float64
PARAMS = {"E": 200000.0, "nu": 0.3, "sy": 100.0, "Q": 50.0, "b": 20.0, "eta": 150.0, "n": 4.0}
INPUTS = ("strain", "old_plastic_strain", "old_equivalent_plastic_strain", "time_step")
OUTPUTS = ("stress", "plastic_strain", "equivalent_plastic_strain")
#: One uniaxial strain increment that needs more Newton updates than the fixture's
#: max_its = 8 over DT_FAIL and fewer over DT_FAIL / 2 (the threshold lies near 5.8 s).
STRAIN_FAIL, DT_FAIL = 0.1, 8.0


def make(solver: str = "", extra: str = "", **params: float) -> Model:
    """A J2Viscoplasticity block with PARAMS (overridden by ``params``) and a solver block."""
    values = {**PARAMS, **params}
    body = "".join(f"    {k} = {v!r}\n" for k, v in values.items())
    solvers = f"[Solvers]\n  [newton]\n    type = Newton\n{solver}  []\n[]\n" if solver else ""
    use = "    solver = newton\n" if solver else ""
    text = (
        f"{solvers}[Models]\n  [model]\n    type = J2Viscoplasticity\n{body}{use}{extra}  []\n[]\n"
    )
    return build_model(hit.parse(text, "vp.i").children["Models"].children["model"])


def tight() -> Model:
    return make("    abs_tol = 1e-12\n    rel_tol = 1e-13\n    max_its = 60\n")


def fixture_model() -> Model:
    root = hit.load(FIXTURES / "viscoplastic" / "model.i")
    return build_model(root.children["Models"].children["model"])


def state(
    strain: torch.Tensor,
    old_plastic: torch.Tensor | None = None,
    old_p: torch.Tensor | None = None,
    dt: torch.Tensor | float = 1.0,
) -> dict[str, torch.Tensor]:
    n = strain.shape[0]
    return {
        "strain": strain,
        "old_plastic_strain": torch.zeros(n, 6, dtype=F64) if old_plastic is None else old_plastic,
        "old_equivalent_plastic_strain": torch.zeros(n, dtype=F64) if old_p is None else old_p,
        "time_step": torch.full((n,), dt, dtype=F64) if isinstance(dt, float) else dt,
    }


def uniaxial(*values: float) -> torch.Tensor:
    strain = torch.zeros(len(values), 6, dtype=F64)
    strain[:, 0] = torch.tensor(values, dtype=F64)
    return strain


# --- an independent reference: bisection on dp of the rate form, in plain floats -------


def reference(
    strain: list[float], old_plastic: list[float], old_p: float, dt: float, c: Mapping[str, float]
) -> tuple[list[float], list[float], float]:
    """(stress, plastic strain, equivalent plastic strain) of one point, by radial return.

    Solves ``q_tr - 3 G dp - sy - R(p_old + dp) = eta (dp / dt)^(1/n)`` for ``dp`` by
    bisection, in Python floats: another unknown, another method, no torch.
    """
    G = c["E"] / (2 * (1 + c["nu"]))
    lam = c["E"] * c["nu"] / ((1 + c["nu"]) * (1 - 2 * c["nu"]))
    elastic = [a - b for a, b in zip(strain, old_plastic, strict=True)]
    trace = sum(elastic[:3])
    dev = [e - (trace / 3 if i < 3 else 0.0) for i, e in enumerate(elastic)]
    q_tr = math.sqrt(1.5) * 2 * G * math.sqrt(sum(d * d for d in dev))

    def hardening(p: float) -> float:
        return c["Q"] * (1 - math.exp(-c["b"] * p))

    def overstress(dp: float) -> float:
        rate = (dp / dt) ** (1 / c["n"]) if dp > 0 else 0.0
        return q_tr - 3 * G * dp - c["sy"] - hardening(old_p + dp) - c["eta"] * rate

    dp = 0.0
    if overstress(0.0) > 0:
        lo, hi = 0.0, (q_tr - c["sy"] - hardening(old_p)) / (3 * G)
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if overstress(mid) > 0 else (lo, mid)
        dp = 0.5 * (lo + hi)
    norm = math.sqrt(sum(d * d for d in dev)) or 1.0
    direction = [math.sqrt(1.5) * d / norm for d in dev]
    plastic = [a + dp * d for a, d in zip(old_plastic, direction, strict=True)]
    stress = [
        2 * G * (e - dp * d) + (lam * trace if i < 3 else 0.0)
        for i, (e, d) in enumerate(zip(elastic, direction, strict=True))
    ]
    return stress, plastic, old_p + dp


def assert_relative(actual: torch.Tensor, expected: torch.Tensor, rtol: float) -> None:
    scale = expected.abs().max().clamp_min(1e-300)
    error = ((actual - expected).abs().max() / scale).item()
    assert error < rtol, f"relative error {error:.3g}"


# --- physics -------------------------------------------------------------------------


def test_fixture_builds() -> None:
    model = fixture_model()
    assert isinstance(model, J2Viscoplasticity)
    assert model.implicit
    assert [v.name for v in model.inputs] == list(INPUTS)
    assert [v.shape for v in model.inputs] == [(6,), (6,), (), ()]
    assert [v.name for v in model.outputs] == list(OUTPUTS)
    assert list(model.named_parameters()) == [f"model.{k}" for k in PARAMS]
    assert model.named_parameters()["model.sy"].item() == 100.0


def test_below_yield_the_response_is_linear_elastic() -> None:
    model = fixture_model()
    elastic = LinearIsotropicElasticity("e", "strain", "stress", {"E": 2e5, "nu": 0.3})
    torch.manual_seed(1)
    strain = torch.randn(20, 6, dtype=F64) * 5e-5
    old = torch.randn(20, 6, dtype=F64) * 5e-5
    x = state(strain, old, torch.rand(20, dtype=F64))
    out = model.forward(x)
    want = elastic.forward({"strain": strain - old})["stress"]
    torch.testing.assert_close(out["stress"], want, rtol=1e-14, atol=1e-12)
    assert torch.equal(out["plastic_strain"], old)
    assert torch.equal(out["equivalent_plastic_strain"], x["old_equivalent_plastic_strain"])
    ev = model.evaluate(x, model.parameters)
    assert ev.status is not None
    assert ev.status.converged.all()
    assert (ev.status.residual == 0).all()


def test_uniaxial_history_matches_the_reference() -> None:
    """Load to 1 % uniaxial strain in 20 steps, unload to -0.5 % in 15, and reload."""
    model = tight()
    path = [0.0005 * k for k in range(1, 21)]
    path += [0.01 - 0.001 * k for k in range(1, 16)]
    path += [-0.005 + 0.002 * k for k in range(1, 9)]
    dts = [0.05 * (1 + (k % 3)) for k in range(len(path))]
    plastic_t = torch.zeros(1, 6, dtype=F64)
    p_t = torch.zeros(1, dtype=F64)
    plastic_r, p_r = [0.0] * 6, 0.0
    yielded = 0
    for value, dt in zip(path, dts, strict=True):
        out = model.forward(state(uniaxial(value), plastic_t, p_t, dt))
        stress_r, plastic_r, p_new = reference([value, 0, 0, 0, 0, 0], plastic_r, p_r, dt, PARAMS)
        yielded += p_new > p_r
        p_r = p_new
        assert_relative(out["stress"][0], torch.tensor(stress_r, dtype=F64), 1e-9)
        assert_relative(out["plastic_strain"][0], torch.tensor(plastic_r, dtype=F64), 1e-9)
        assert abs(out["equivalent_plastic_strain"].item() - p_r) <= 1e-9 * max(p_r, 1e-12)
        plastic_t, p_t = out["plastic_strain"], out["equivalent_plastic_strain"]
    assert 20 < yielded < len(path)  # both elastic and plastic steps were taken


def test_random_multiaxial_points_match_the_reference() -> None:
    model = tight()
    torch.manual_seed(2)
    n = 40
    strain = torch.randn(n, 6, dtype=F64) * 3e-3
    old = torch.randn(n, 6, dtype=F64) * 5e-4
    old[:, :3] -= old[:, :3].mean(-1, keepdim=True)  # plastic strain is deviatoric
    old_p = torch.rand(n, dtype=F64) * 0.05
    dt = 10 ** (4 * torch.rand(n, dtype=F64) - 3)
    out = model.forward(state(strain, old, old_p, dt))
    for i in range(n):
        s, e, p = reference(
            strain[i].tolist(), old[i].tolist(), old_p[i].item(), dt[i].item(), PARAMS
        )
        assert_relative(out["stress"][i], torch.tensor(s, dtype=F64), 1e-9)
        assert_relative(out["plastic_strain"][i], torch.tensor(e, dtype=F64), 1e-9)
        assert out["equivalent_plastic_strain"][i].item() == pytest.approx(p, rel=1e-9)


def test_rate_dependence() -> None:
    """The same strain applied faster gives a higher stress: at the end of the step the von
    Mises stress is the flow stress sy + R(p) + eta (dp / dt)^(1/n)."""
    model = tight()
    dt = torch.tensor([1e-3, 1.0, 1e6, 1e12], dtype=F64)
    out = model.forward(state(uniaxial(0.02, 0.02, 0.02, 0.02), dt=dt))
    mises = out["stress"][:, 0] - out["stress"][:, 1]  # in uniaxial strain
    assert (mises[:-1] > mises[1:]).all()
    p = out["equivalent_plastic_strain"]
    flow = 100 + 50 * (1 - torch.exp(-20 * p)) + 150 * (p / dt) ** 0.25
    assert_relative(mises, flow, 1e-12)
    assert mises[-1].item() == pytest.approx(
        100 + 50 * (1 - math.exp(-20 * p[-1].item())), rel=1e-3
    )


def test_a_point_does_not_depend_on_its_batch() -> None:
    model = fixture_model()
    torch.manual_seed(3)
    x = state(torch.randn(16, 6, dtype=F64) * 4e-3, dt=torch.rand(16, dtype=F64) * 2)
    whole = model.forward(x)
    for i in (0, 7, 15):
        alone = model.forward({k: v[i : i + 1] for k, v in x.items()})
        for name in OUTPUTS:
            assert torch.equal(alone[name][0], whole[name][i])


def test_unbatched_time_step_goes_to_every_point() -> None:
    model = fixture_model()
    x = state(uniaxial(0.002, 0.004, 0.006))
    batched = model.forward(x)
    x["time_step"] = torch.tensor(1.0, dtype=F64)
    torch.testing.assert_close(model.forward(x), batched, rtol=0, atol=0)
    single = {k: v[0] if v.dim() else v for k, v in x.items()}
    assert model.forward(single)["stress"].shape == (6,)


# --- convergence ---------------------------------------------------------------------


def test_a_large_step_fails_and_half_the_step_converges() -> None:
    model = fixture_model()
    x = state(uniaxial(0.001, STRAIN_FAIL, 0.002), dt=DT_FAIL)
    with pytest.raises(ConvergenceError) as info:
        model.forward(x)
    err = info.value
    assert err.recoverable
    assert (err.failed, err.total) == (1, 3)
    assert err.worst > 1e-3
    assert err.converged.tolist() == [True, False, True]  # the point at STRAIN_FAIL
    assert err.rows.tolist() == [1]
    assert err.residual.tolist() == [err.worst]
    assert (
        str(err)
        == f"model 'model': 1 of 3 points did not converge (worst residual {err.worst:.3e})"
    )
    for method, args in (("jacobian", (x,)), ("param_jacobian", (x,))):
        with pytest.raises(ConvergenceError):
            getattr(model, method)(*args)

    x["time_step"] = x["time_step"] / 2
    out = model.forward(x)
    want = tight().forward(x)
    torch.testing.assert_close(out, want, rtol=1e-9, atol=1e-12)


def test_two_half_steps_converge_where_one_step_fails() -> None:
    """What a host does on ConvergenceError: cut the step, strain and time, in two."""
    model = fixture_model()
    with pytest.raises(ConvergenceError):
        model.forward(state(uniaxial(STRAIN_FAIL), dt=DT_FAIL))
    half = model.forward(state(uniaxial(STRAIN_FAIL / 2), dt=DT_FAIL / 2))
    full = model.forward(
        state(
            uniaxial(STRAIN_FAIL),
            half["plastic_strain"],
            half["equivalent_plastic_strain"],
            DT_FAIL / 2,
        )
    )
    assert full["equivalent_plastic_strain"].item() > half["equivalent_plastic_strain"].item()


def test_status_reports_each_point() -> None:
    model = fixture_model()
    x = state(uniaxial(1e-4, STRAIN_FAIL, 0.002, STRAIN_FAIL), dt=DT_FAIL)
    ev = model.evaluate(x, model.parameters)
    assert ev.status is not None
    assert ev.status.converged.tolist() == [True, False, True, False]
    assert ev.status.residual[0] == 0  # elastic
    assert ev.status.residual[2] < 1e-10 * 3e2
    assert ev.status.residual[1] > 1e-3


def test_empty_batch() -> None:
    model = fixture_model()
    out = model.forward(state(torch.zeros(0, 6, dtype=F64)))
    assert out["stress"].shape == (0, 6)
    assert out["equivalent_plastic_strain"].shape == (0,)


# --- derivatives against central differences -----------------------------------------


@pytest.fixture(scope="module")
def points() -> dict[str, torch.Tensor]:
    """Plastic points over four decades of time step, and two elastic ones."""
    torch.manual_seed(4)
    n = 10
    strain = torch.randn(n, 6, dtype=F64) * 3e-3
    strain[-2:] *= 0.02
    old = torch.randn(n, 6, dtype=F64) * 3e-4
    old[:, :3] -= old[:, :3].mean(-1, keepdim=True)
    old[-2:] = 0
    return state(
        strain, old, torch.rand(n, dtype=F64) * 0.02, 10 ** (4 * torch.rand(n) - 2).to(F64)
    )


def fd_input(model: Model, x: dict[str, torch.Tensor], name: str, out: str) -> torch.Tensor:
    """(B, *out, *in) by central differences along each component of input ``name``."""
    base = x[name]
    flat = base.reshape(base.shape[0], -1)
    h = 1e-6 * flat.abs().amax(-1).clamp_min(1e-3)  # a step relative to each point
    columns = []
    for j in range(flat.shape[1]):
        step = torch.zeros_like(flat)
        step[:, j] = h
        step = step.reshape(base.shape)
        plus = model.forward({**x, name: base + step})[out]
        minus = model.forward({**x, name: base - step})[out]
        columns.append((plus - minus) / (2 * h.reshape(-1, *[1] * (plus.dim() - 1))))
    fd = torch.stack(columns, dim=-1)
    return fd.squeeze(-1) if base.dim() == 1 else fd


def fd_param(model: Model, x: dict[str, torch.Tensor], name: str, out: str) -> torch.Tensor:
    return parameter_differences(model, x, name)[out]


@pytest.mark.parametrize("wrt", INPUTS)
@pytest.mark.parametrize("of", OUTPUTS)
def test_jacobian(points: dict[str, torch.Tensor], of: str, wrt: str) -> None:
    model = tight()
    block = model.jacobian(points)[of][wrt]
    fd = fd_input(model, points, wrt, of)
    assert block.shape == fd.shape
    for i in range(block.shape[0]):
        assert_relative(block[i], fd[i], 1e-6)


@pytest.mark.parametrize("param", list(PARAMS))
@pytest.mark.parametrize("of", OUTPUTS)
def test_param_jacobian(points: dict[str, torch.Tensor], of: str, param: str) -> None:
    model = tight()
    block = model.param_jacobian(points)[of][f"model.{param}"]
    fd = fd_param(model, points, f"model.{param}", of)
    assert block.shape == fd.shape
    for i in range(block.shape[0] - 2):
        assert_relative(block[i], fd[i], 1e-6)
    if param not in ("E", "nu"):  # elastic points do not see the plastic parameters
        assert (block[-2:] == 0).all()


def test_jvp_and_param_vjp(points: dict[str, torch.Tensor]) -> None:
    model = tight()
    torch.manual_seed(5)
    tangents = {k: torch.randn_like(v) * v.abs().mean() for k, v in points.items()}
    h = 1e-6
    plus = model.forward({k: v + h * tangents[k] for k, v in points.items()})
    minus = model.forward({k: v - h * tangents[k] for k, v in points.items()})
    jvp = model.jvp(points, tangents)
    for name in OUTPUTS:
        assert_relative(jvp[name], (plus[name] - minus[name]) / (2 * h), 1e-6)

    cotangents = {v.name: torch.randn((10, *v.shape), dtype=F64) for v in model.outputs}
    adjoints = model.param_vjp(points, cotangents)
    for name in model.named_parameters():
        want = sum((cotangents[o] * fd_param(model, points, name, o)).sum() for o in OUTPUTS)
        assert adjoints[name].shape == ()
        assert_relative(adjoints[name], torch.as_tensor(want), 1e-6)


# --- input file ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "extra", "key", "message"),
    [
        ({"E": -1.0}, "", "E", "parameter 'E': expected a value > 0, got -1"),
        ({"nu": 0.5}, "", "nu", "parameter 'nu': expected a value in (-1, 0.5), got 0.5"),
        ({"eta": 0.0}, "", "eta", "parameter 'eta': expected a value > 0, got 0"),
        ({"n": 0.5}, "", "n", "parameter 'n': expected a value >= 1, got 0.5"),
        ({"b": -2.0}, "", "b", "parameter 'b': expected a value >= 0, got -2"),
        ({"sy": -1.0}, "", "sy", "parameter 'sy': expected a value >= 0, got -1"),
        ({}, "    stress = strain\n", "stress", "variable name 'strain' is already used for"),
        ({}, "    solver = nope\n", "solver", "unknown solver 'nope': expected [Solvers/nope]; "),
    ],
)
def test_input_file_errors(params: dict[str, float], extra: str, key: str, message: str) -> None:
    with pytest.raises(HitError) as info:
        make(extra=extra, **params)
    assert message in info.value.message
    assert info.value.line > 2


def test_missing_parameter_names_its_block() -> None:
    text = "[Models]\n  [vp]\n    type = J2Viscoplasticity\n    E = 1\n  []\n[]\n"
    with pytest.raises(HitError, match=r"\[Models/vp\]: missing required parameter 'nu'") as info:
        build_model(hit.parse(text, "vp.i").children["Models"].children["vp"])
    assert info.value.line == 2


def test_hardening_is_optional() -> None:
    text = (
        "[Models]\n  [vp]\n    type = J2Viscoplasticity\n    E = 1e5\n    nu = 0.3\n"
        "    sy = 10\n    eta = 1\n    n = 1\n  []\n[]\n"
    )
    model = build_model(hit.parse(text).children["Models"].children["vp"])
    assert model.named_parameters()["vp.Q"].item() == 0.0
    assert model.named_parameters()["vp.b"].item() == 0.0


def test_a_failed_call_leaves_the_model_usable() -> None:
    model = fixture_model()
    bad = state(uniaxial(STRAIN_FAIL), dt=DT_FAIL)
    with pytest.raises(Neml2Error):
        model.forward(bad)
    good = state(uniaxial(0.002))
    assert model.forward(good)["stress"].shape == (1, 6)
