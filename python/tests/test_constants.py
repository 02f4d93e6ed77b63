"""Constants a model forms from its options (neml2.models.constants): a graph holds them as
buffers of its module, which export lifts as constants of the graph's device, and reads them
back while traced; evaluated eagerly, a model makes them itself."""

from __future__ import annotations

import torch

from neml2.compile.export import Graph, export_graph
from neml2.compile.request import Request, prepare
from neml2.models import constants

from .conftest import REPO

RESOLVED_SHEAR = REPO / "tests" / "neml2_inputs" / "crystal" / "resolved_shear.i"


def test_a_graph_holds_the_schmid_tensors_as_buffers() -> None:
    prepared = prepare(Request(str(RESOLVED_SHEAR), "model", pairs=(":",)))
    graph = Graph(prepared.model, "jacobian", prepared.sel, prepared.dtype)
    assert graph.constants == []
    program = export_graph(graph, torch.device("cpu"))
    # the model's one constant, registered as a buffer and lifted by export
    assert graph.constants == ["model.schmid.M"]
    assert "constant_0" in program.graph_signature.inputs_to_buffers.values()
    args = graph.example_args(torch.device("cpu"))
    with torch.no_grad():
        want = graph.values(args)
    got = program.module()(*args)
    for a, b in zip(got, want, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-14, atol=0)
    # while traced, the model reads the buffer, not numbers of its own
    held = graph.get_buffer("constant_0")
    with constants.given_constants({"model.schmid.M": held}):
        assert prepared.model.schmid(args[0], "M") is held  # type: ignore[attr-defined]


def test_eagerly_a_model_makes_its_constants() -> None:
    like = torch.zeros(2, dtype=torch.float32)
    with constants.collecting() as seen:
        made = constants.constant("m.c", [[1.0, 2.0]], like)
    assert made.dtype == torch.float32
    assert made.tolist() == [[1.0, 2.0]]
    assert seen == {"m.c": made}
    # outside collecting(), nothing is recorded; a key a graph does not hold is made
    with constants.given_constants({"other": torch.ones(1)}):
        again = constants.constant("m.c", [[1.0, 2.0]], like)
    assert again is not made
    assert torch.equal(again, made)
