"""neml2-compile without compiling: option selection, graph argument order, meta."""

from __future__ import annotations

import pytest
import torch

from neml2.compile import Graph, Selection, build_meta, select_pairs, select_params
from neml2.errors import Neml2Error
from neml2.models import Model

from .test_elasticity import make

F64 = torch.float64
CPU = torch.device("cpu")


@pytest.fixture
def model() -> Model:
    return make("100 0.3", "YOUNGS_MODULUS POISSONS_RATIO")


@pytest.mark.parametrize("spec", [":", "stress:strain", "stress:", ":strain"])
def test_pairs(model: Model, spec: str) -> None:
    assert select_pairs(model, [spec]) == [("stress", "strain")]


def test_no_pairs(model: Model) -> None:
    assert select_pairs(model, []) == []


@pytest.mark.parametrize("spec", ["strain:stress", "stress", "stress:eps"])
def test_unknown_pair(model: Model, spec: str) -> None:
    with pytest.raises(Neml2Error) as info:
        select_pairs(model, [spec])
    assert str(info.value) == (
        f"-d {spec}: model 'model' has no derivative pair '{spec}'; "
        "pairs (output:input): stress:strain, or ':' for all"
    )


@pytest.mark.parametrize(
    ("specs", "expected"),
    [
        ([":"], ["model.E", "model.nu"]),
        (["nu"], ["model.nu"]),
        (["model.nu", "E"], ["model.E", "model.nu"]),
        ([], []),
    ],
)
def test_params(model: Model, specs: list[str], expected: list[str]) -> None:
    assert select_params(model, specs) == expected


def test_unknown_param(model: Model) -> None:
    with pytest.raises(Neml2Error) as info:
        select_params(model, ["K"])
    assert str(info.value) == (
        "-p K: model 'model' has no parameter 'K'; parameters: model.E, model.nu, or ':' for all"
    )


def test_graph_modules_match_the_model_with_some_parameters_baked(model: Model) -> None:
    """-d : -p nu: E is baked into the graph, nu is an argument; results are the model's."""
    sel = Selection(pairs=[("stress", "strain")], params=["model.nu"])
    strain = torch.rand(5, 6, dtype=F64)
    tangent = torch.rand(5, 6, dtype=F64)
    cotangent = torch.rand(5, 6, dtype=F64)
    nu = model.named_parameters()["model.nu"]
    x = {"strain": strain}

    (stress,) = Graph(model, "forward", sel)(strain, nu)
    torch.testing.assert_close(stress, model.forward(x)["stress"])
    (jvp,) = Graph(model, "jvp", sel)(strain, nu, tangent)
    torch.testing.assert_close(jvp, model.jvp(x, {"strain": tangent})["stress"])
    (jac,) = Graph(model, "jacobian", sel)(strain, nu)
    torch.testing.assert_close(jac, model.jacobian(x)["stress"]["strain"])
    (dnu,) = Graph(model, "param_jacobian", sel)(strain, nu)
    torch.testing.assert_close(dnu, model.param_jacobian(x)["stress"]["model.nu"])
    (adj,) = Graph(model, "param_vjp", sel)(strain, nu, cotangent)
    torch.testing.assert_close(adj, model.param_vjp(x, {"stress": cotangent})["model.nu"])

    # the promoted value is the argument, not the value the model had at build time
    (stress2,) = Graph(model, "forward", sel)(strain, nu * 0.5)
    assert not torch.allclose(stress, stress2)


def test_meta_of_a_forward_only_artifact(model: Model) -> None:
    meta = build_meta(model, CPU, Selection(pairs=[], params=[]))
    assert meta["parameters"] == []
    assert meta["derivatives"] == []
    assert meta["param_derivatives"] == []
    assert list(meta["graphs"]) == ["forward"]
    assert meta["graphs"]["forward"]["args"] == [{"role": "input", "name": "strain"}]


def test_meta_without_pairs_has_param_vjp_but_no_param_jacobian(model: Model) -> None:
    meta = build_meta(model, CPU, Selection(pairs=[], params=["model.E"]))
    assert list(meta["graphs"]) == ["forward", "param_vjp"]
    assert meta["param_derivatives"] == []
    assert meta["parameters"] == [{"name": "model.E", "shape": [], "value": [100.0]}]


def test_implicit_model_graphs_export_with_a_dynamic_batch_and_return_the_status() -> None:
    """torch.export only (no AOTInductor): the solve is one while_loop, not unrolled."""
    from neml2 import hit
    from neml2.compile import BATCHED_ROLES, build_meta, graph_returns
    from neml2.models import build_model

    from .conftest import FIXTURES
    from .test_viscoplasticity import fixture_model, state, uniaxial

    vp = fixture_model()
    sel = Selection(select_pairs(vp, [":"]), select_params(vp, ["sy"]))
    assert graph_returns(vp, "forward", sel)[-2:] == [
        {"role": "converged", "name": "converged"},
        {"role": "residual", "name": "residual"},
    ]
    assert build_meta(vp, CPU, sel)["status"] == {"converged": "converged", "residual": "residual"}
    module = Graph(vp, "jacobian", sel)
    batch = torch.export.Dim("batch", min=0)
    shapes = tuple({0: batch} if s["role"] in BATCHED_ROLES else None for s in module.args)
    program = torch.export.export(module, module.example_args(CPU), dynamic_shapes=(shapes,))
    loops = [
        n for n in program.graph.nodes if n.op == "call_function" and "while_loop" in str(n.target)
    ]
    assert len(loops) == 1

    x = state(uniaxial(1e-4, 0.003, 0.1), dt=torch.tensor([1.0, 1.0, 8.0], dtype=F64))
    sy = vp.named_parameters()["model.sy"]
    defaults = [module.setting(s["name"]) for s in module.args if s["role"] == "setting"]
    returned = program.module()(*(x[v.name] for v in vp.inputs), sy, *defaults)
    *blocks, converged, residual = returned
    assert converged.tolist() == [True, True, False]
    assert residual[0] == 0
    assert residual[2] > 1e-3
    ev = vp.evaluate(x, vp.parameters, jacobian=True)
    for spec, block in zip(graph_returns(vp, "jacobian", sel), blocks, strict=False):
        torch.testing.assert_close(block, ev.jacobian[spec["of"]][spec["wrt"]])

    # the solver's settings are arguments of the exported graph, not constants in it
    def call(**values: float) -> tuple[torch.Tensor, ...]:
        given = [
            torch.tensor(values[name.rpartition(".")[2]], dtype=t.dtype)
            if name.rpartition(".")[2] in values
            else t
            for name, t in zip(module.settings, defaults, strict=True)
        ]
        return tuple(program.module()(*(x[v.name] for v in vp.inputs), sy, *given))

    assert call(max_its=50)[-2].tolist() == [True, True, True]
    assert call(max_its=1)[-2].tolist() == [True, False, False]
    loose = call(abs_tol=1e-6, rel_tol=1e-3, max_its=50)
    text = (FIXTURES / "viscoplastic" / "model.i").read_text()
    for old, new in (("abs_tol = 1e-10", "abs_tol = 1e-6"), ("rel_tol = 1e-10", "rel_tol = 1e-3")):
        text = text.replace(old, new)
    text = text.replace("max_its = 8\n", "max_its = 50\n")
    other = build_model(hit.parse(text, "loose.i").children["Models"].children["model"])
    assert other.solver_settings == {"newton": {"abs_tol": 1e-6, "rel_tol": 1e-3, "max_its": 50}}
    want = other.evaluate(x, other.parameters, jacobian=True)
    assert torch.equal(loose[-2], want.status.converged)
    for spec, block in zip(graph_returns(vp, "jacobian", sel)[:-2], loose, strict=False):
        assert torch.equal(block, want.jacobian[spec["of"]][spec["wrt"]])
    assert not torch.equal(loose[0], call(max_its=50)[0])


def test_in_place_variants_write_their_per_point_returns_into_the_buffers(model: Model) -> None:
    """--into: <graph>_into takes one buffer per per-point return and returns the buffer."""
    sel = Selection(pairs=[("stress", "strain")], params=["model.E"], into=("forward", "jvp"))
    strain, tangent = torch.rand(5, 6, dtype=F64), torch.rand(5, 6, dtype=F64)
    E = model.named_parameters()["model.E"]
    for graph, args in (("forward", (strain, E)), ("jvp", (strain, E, tangent))):
        (plain,) = Graph(model, graph, sel)(*args)
        buffer = torch.full((5, 6), -7.25, dtype=F64)
        (stored,) = Graph(model, graph + "_into", sel)(*args, buffer)
        assert stored.data_ptr() == buffer.data_ptr()
        torch.testing.assert_close(buffer, plain, rtol=0, atol=0)
    # the jacobian block of linear elasticity is batch-independent: nothing to store in place
    assert Graph(model, "jacobian_into", sel).written == []


def test_meta_names_in_place_variants_on_the_cpu_only(model: Model) -> None:
    sel = Selection(pairs=[("stress", "strain")], params=[], into=("forward",))
    cpu = build_meta(model, CPU, sel)["graphs"]
    assert cpu["forward"]["into"] == "forward_into.pt2"
    assert "into" not in cpu["jvp"]
    assert sel.jobs(CPU) == ["forward", "jvp", "jacobian", "forward_into"]
    cuda = torch.device("cuda")
    assert "into" not in build_meta(model, cuda, sel)["graphs"]["forward"]
    assert sel.jobs(cuda) == ["forward", "jvp", "jacobian"]


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        (
            ["forwards"],
            "--into forwards: no such graph; graphs: forward, jvp, jacobian, "
            "param_jacobian, param_vjp",
        ),
        (
            ["param_vjp"],
            "--into param_vjp: param_vjp is not compiled (compiled: forward, jvp, jacobian)",
        ),
    ],
)
def test_bad_into(specs: list[str], message: str) -> None:
    from neml2.compile import select_into

    with pytest.raises(Neml2Error) as info:
        select_into(specs, ["forward", "jvp", "jacobian"])
    assert str(info.value) == message
