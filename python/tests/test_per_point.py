"""Per-point parameters of the eager models (``Model.set_parameter`` with a ``(B, *shape)``
tensor): every result of a per-point call equals, point by point, a call on that point
alone with the point's values given shared (rtol 1e-10), for an explicit leaf, an explicit
ComposedModel, an ImplicitUpdate whose residual model takes them point by point and the
J2Viscoplasticity kernel, which takes them itself; and the mistakes are refused.

NEML2 3.1.0, the oracle of the other tests, is driven one point at a time (its eager
Newton solve refuses a batch), so the per-point call compared with the single points here
is compared with NEML2 through them: the single points are the calls the oracle tests check.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch

import neml2
from neml2.errors import Neml2Error
from neml2.models import Model
from neml2.models.points import PointWise, with_per_point

from .conftest import FIXTURES, REPO

F64 = torch.float64
B = 4
RTOL = 1e-10


def steady(x: dict[str, torch.Tensor]) -> None:
    """A step of 1 s for the J2 ImplicitUpdate (inputs ``t`` and ``t~1``), strains of 1e-3."""
    x["t"] = torch.ones(B, dtype=F64)
    x["t~1"] = torch.zeros(B, dtype=F64)
    x["strain"] = x["strain"] / 10
    x["plastic_strain~1"] = x["plastic_strain~1"] / 10


def small_step(x: dict[str, torch.Tensor]) -> None:
    """A small step of 1 s for J2Viscoplasticity, which converges in its 8 iterations."""
    x["time_step"] = torch.ones(B, dtype=F64)
    x["strain"] = x["strain"] / 10
    x["old_plastic_strain"] = x["old_plastic_strain"] / 10


#: (file, parameters given per point, input fix-up): one model of each kind.
CASES: dict[str, tuple[Path, list[str], Callable[[dict[str, torch.Tensor]], None] | None]] = {
    "leaf": (FIXTURES / "elastic_promoted" / "model.i", ["model.E", "model.nu"], None),
    "composed": (FIXTURES / "thermoelastic" / "model.i", ["elastic.E", "thermal.alpha"], None),
    "implicit_update": (
        REPO / "tests" / "neml2_inputs" / "j2_viscoplastic.i",
        ["elasticity.E", "trial_stress.E", "flow_rate.reference_stress", "elastic_strain.weights"],
        steady,
    ),
    "j2_kernel": (
        FIXTURES / "viscoplastic" / "model.i",
        ["model.E", "model.sy", "model.n"],
        small_step,
    ),
}


def load(path: Path) -> Model:
    model = neml2.load_model(path, "model")
    assert isinstance(model, Model)
    return model


def sample(model: Model, seed: int) -> tuple[dict, dict, dict]:
    """Inputs (strains of 1e-2, scalars in [0.5, 1.5)), tangents and cotangents."""
    g = torch.Generator().manual_seed(seed)
    x = {
        v.name: 1e-2 * torch.randn((B, *v.shape), generator=g, dtype=F64)
        if v.shape
        else 0.5 + torch.rand((B,), generator=g, dtype=F64)
        for v in model.inputs
    }
    v = {i.name: torch.randn((B, *i.shape), generator=g, dtype=F64) for i in model.inputs}
    c = {o.name: torch.randn((B, *o.shape), generator=g, dtype=F64) for o in model.outputs}
    return x, v, c


def per_point_values(model: Model, names: list[str]) -> dict[str, torch.Tensor]:
    """Each parameter of ``names`` varied by up to 20 % between points."""
    g = torch.Generator().manual_seed(7)
    return {
        q: model.parameters[q]
        * (1 + 0.2 * torch.rand((B, *model.parameters[q].shape), generator=g, dtype=F64))
        for q in names
    }


def results(model: Model, x: dict, v: dict, c: dict) -> dict:
    return {
        "forward": model.forward(x),
        "jvp": model.jvp(x, v),
        "jacobian": model.jacobian(x),
        "param_jacobian": model.param_jacobian(x),
        "param_vjp": model.param_vjp(x, c),
    }


def close(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    scale = max(float(want.abs().max()) if want.numel() else 0.0, 1.0)
    torch.testing.assert_close(got, want, rtol=RTOL, atol=RTOL * 1e-3 * scale, msg=what)


def point(block: torch.Tensor, single: torch.Tensor, b: int) -> torch.Tensor:
    """Row ``b`` of a per-point result (a block that came unbatched is every point's)."""
    return block[b] if block.dim() > single.dim() else block


@pytest.mark.parametrize("case", list(CASES))
def test_per_point_results_equal_each_point_alone(case: str) -> None:
    path, names, fix = CASES[case]
    model = load(path)
    x, v, c = sample(model, 0)
    if fix is not None:
        fix(x)
    values = per_point_values(model, names)
    for q in names:
        model.set_parameter(q, values[q])
    got = results(model, x, v, c)
    assert got["forward"][model.outputs[0].name].shape[0] == B
    for q in names:  # every parameter of the set is per point, the others summed
        assert got["param_vjp"][q].shape == (B, *model.parameter_shapes[q])
    summed = {q: torch.zeros_like(t) for q, t in model.parameters.items() if q not in names}
    alone = load(path)
    for b in range(B):
        for q in names:
            alone.set_parameter(q, values[q][b].clone())
        one = results(
            alone,
            {k: t[b] for k, t in x.items()},
            {k: t[b] for k, t in v.items()},
            {k: t[b] for k, t in c.items()},
        )
        for graph in ("forward", "jvp"):
            for name, want in one[graph].items():
                close(got[graph][name][b], want, f"{case} {graph} {name} point {b}")
        for graph in ("jacobian", "param_jacobian"):
            for of, row in one[graph].items():
                for wrt, want in row.items():
                    close(point(got[graph][of][wrt], want, b), want, f"{case} {of}/{wrt} {b}")
        for q, want in one["param_vjp"].items():
            if q in names:
                close(got["param_vjp"][q][b], want, f"{case} adjoint {q} point {b}")
            else:
                summed[q] += want
    for q, want in summed.items():
        close(got["param_vjp"][q], want, f"{case} adjoint {q} summed")


def test_a_per_point_call_broadcasts_unbatched_inputs_and_can_go_back_to_shared() -> None:
    model = load(FIXTURES / "elastic_promoted" / "model.i")
    strain = torch.full((6,), 1e-3, dtype=F64)
    E = torch.tensor([1e5, 2e5, 3e5], dtype=F64)
    model.set_parameter("model.E", E)
    stress = model.forward({"strain": strain})["stress"]
    assert stress.shape == (3, 6)
    close(stress / E.unsqueeze(-1), (stress[0] / E[0]).expand(3, 6), "stress per E")
    model.set_parameter("model.E", torch.tensor(2e5, dtype=F64))
    close(model.forward({"strain": strain})["stress"], stress[1], "shared again")
    assert model.jacobian({"strain": strain})["stress"]["strain"].shape == (6, 6)


def test_no_points() -> None:
    model = load(FIXTURES / "thermoelastic" / "model.i")
    model.set_parameter("elastic.E", torch.empty(0, dtype=F64))
    x = {"strain": torch.zeros(0, 6, dtype=F64), "temperature": torch.zeros(0, dtype=F64)}
    assert model.forward(x)["stress"].shape == (0, 6)
    assert model.param_jacobian(x)["stress"]["elastic.E"].shape == (0, 6)
    assert model.param_vjp(x, {})["elastic.E"].shape == (0,)


def test_the_model_tree_changes_only_where_a_parameter_is_per_point() -> None:
    composed = load(FIXTURES / "thermoelastic" / "model.i")
    changed = with_per_point(composed, ["elastic.E"])
    assert isinstance(changed, PointWise)  # no solve inside: evaluated point by point whole
    # the block of stress by strain depends on the point once E does
    assert not composed.jacobian_batched("stress", "strain")
    assert changed.jacobian_batched("stress", "strain")
    assert with_per_point(composed, ["nothing.here"]) is composed
    outer = load(REPO / "tests" / "neml2_inputs" / "j2_viscoplastic.i")
    changed = with_per_point(outer, ["flow_rate.reference_stress", "elasticity.E"])
    kinds = [type(m).__name__ for m in changed.models]  # type: ignore[attr-defined]
    names = [m.name for m in changed.models]  # type: ignore[attr-defined]
    i = names.index("return_map")
    # rebuilt around the solve: the update keeps its Newton loop, its residual model is
    # evaluated point by point; elasticity is, and the models without E stay as they were
    assert kinds[i] == "ImplicitUpdate"
    assert isinstance(changed.models[i].system, PointWise)  # type: ignore[attr-defined]
    assert kinds[names.index("elasticity")] == "PointWise"
    assert kinds[names.index("trial_state")] == "ComposedModel"
    kernel = load(FIXTURES / "viscoplastic" / "model.i")
    assert with_per_point(kernel, ["model.E"]) is kernel  # takes them itself


def test_mistakes_are_refused_and_change_nothing() -> None:
    model = load(FIXTURES / "elastic_promoted" / "model.i")
    before = dict(model.parameters)

    def refused(name: str, value: object, message: str) -> None:
        with pytest.raises(Neml2Error) as err:
            model.set_parameter(name, value)  # type: ignore[arg-type]
        assert str(err.value) == message
        assert "\n" not in message
        assert model.parameters == before

    refused(
        "E",
        torch.ones(B, dtype=F64),
        "model 'model': unknown parameter 'E' (expected parameters: model.E, model.nu)",
    )
    refused("model.E", [1.0, 2.0], "model 'model': parameter 'model.E' is not a tensor")
    refused(
        "model.E",
        torch.ones(B, 2, dtype=F64),
        "model 'model': parameter 'model.E' has shape (4, 2), expected () or (B,)",
    )
    refused(
        "model.E",
        torch.ones(B, dtype=torch.float32),
        "model 'model': parameter 'model.E' is torch.float32 on cpu, expected torch.float64 on cpu",
    )
    model.set_parameter("model.E", torch.ones(B, dtype=F64))
    with pytest.raises(Neml2Error) as err:
        model.forward({"strain": torch.zeros(3, 6, dtype=F64)})
    assert str(err.value) == (
        "model 'model': batch sizes disagree: parameter 'model.E' has 4 but input 'strain' has 3"
    )
    model.set_parameter("model.nu", torch.full((5,), 0.3, dtype=F64))
    with pytest.raises(Neml2Error) as err:
        model.forward({"strain": torch.zeros(6, dtype=F64)})
    assert "parameter 'model.nu' has 5 but parameter 'model.E' has 4" in str(err.value)


def test_a_solve_inside_another_model_is_refused() -> None:
    kernel = load(FIXTURES / "viscoplastic" / "model.i")
    wrapped = kernel.with_sub_batch({"strain": (2,)})  # every sub-batch entry a point
    with pytest.raises(Neml2Error) as err:
        wrapped.set_parameter("model.E", torch.full((B,), 2e5, dtype=F64))
    assert str(err.value) == (
        "model 'model': per-point parameters are not supported for J2Viscoplasticity 'model', "
        "which runs a Newton solve inside (parameters model.E); give them one value for every "
        "point"
    )
    assert wrapped.parameters["model.E"].shape == ()
