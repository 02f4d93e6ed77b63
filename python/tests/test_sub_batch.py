"""Sub-batch axes: declared in [Settings], propagated through models, reduced, and
evaluated as NEML2 3.1.0 evaluates them (values and derivatives)."""

from __future__ import annotations

import pytest
import torch

from neml2 import hit
from neml2.errors import HitError
from neml2.models.sub_batch import build_with_settings

from .conftest import REPO
from .oracle import Case, answers, check, oracle_folder  # noqa: F401

INPUTS = REPO / "tests" / "neml2_inputs" / "sub_batch"
B = 4


def randn(*shape: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64)


CASES = [
    Case(INPUTS / "invariant.i", {"S": 100 * randn(B, 3, 6, seed=1)}),
    Case(INPUTS / "intermediate_mean.i", {"stress_grain": randn(B, 4, 6, seed=2)}),
    Case(INPUTS / "intermediate_sum.i", {"stress_grain": randn(B, 4, 6, seed=3)}),
    Case(INPUTS / "intermediate_diff.i", {"a": randn(B, 2, 5, 6, seed=4)}),
    Case(INPUTS / "dynamic_mean.i", {"a": randn(B, 5, 6, seed=5)}, sub_batch={"a": (5,)}),
    Case(INPUTS / "dynamic_sum.i", {"a": randn(B, 5, 6, seed=6)}, sub_batch={"a": (5,)}),
    Case(INPUTS / "composed.i", {"eg": 1e-2 * randn(B, 3, 6, seed=7), "e0": randn(B, 6, seed=8)}),
    # the compiled fixture of tests/aoti/test_vocabulary.cpp, one variable of every type
    Case(
        REPO / "tests" / "aoti" / "vocabulary" / "model.i",
        {
            "grain_strain": 1e-2 * randn(B, 3, 6, seed=9),
            "macro_strain": 1e-2 * randn(B, 6, seed=10),
            "velocity_gradient": randn(B, 3, 3, seed=11),
            "orientation": 0.3 * randn(B, 3, seed=12),
            "velocity": randn(B, 3, seed=13),
            "stiffness": randn(B, 6, 6, seed=14),
            "plane": randn(B, 3, seed=15),
        },
    ),
]


@pytest.fixture(scope="module")
def theirs(oracle_folder):  # noqa: F811 (the imported fixture)
    return answers(oracle_folder, CASES)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c.id for c in CASES])
def test_agrees_with_neml2(index: int, theirs: list[dict]) -> None:
    check(CASES[index], theirs[index])


def test_shapes_propagate_through_a_composed_model() -> None:
    model = next(c for c in CASES if c.id == "composed").build()
    shapes = {v.name: (v.shape, v.sub_batch) for v in (*model.inputs, *model.outputs)}
    assert shapes == {
        "eg": ((3, 6), (3,)),
        "e0": ((6,), ()),
        "e": ((3, 6), (3,)),
        "ep": ((), ()),
    }


def test_full_jacobian_is_block_diagonal_over_the_sub_batch() -> None:
    model = CASES[0].build()
    x = dict(CASES[0].inputs)
    block = model.jacobian(x)["s"]["S"]
    assert block.shape == (B, 3, 3, 6)
    # the invariant of grain i does not depend on the stress of grain j != i
    off = block.clone()
    for i in range(3):
        off[:, i, i] = 0
    assert float(off.abs().max()) == 0.0
    assert float(block[:, 0, 0].abs().max()) > 0.0
    # jvp along a tangent that differs per grain is the full block's action
    v = randn(B, 3, 6, seed=11)
    jvp = model.jvp(x, {"S": v})["s"]
    torch.testing.assert_close(jvp, torch.einsum("bijk,bjk->bi", block, v))


def test_a_reduction_needs_a_sub_batch_axis(tmp_path) -> None:
    text = (INPUTS / "intermediate_mean.i").read_text().split("[Models]")[1]
    path = tmp_path / "no_settings.i"
    path.write_text("[Models]" + text)
    with pytest.raises(HitError, match=r"has no sub-batch axis.*example_batch_shape"):
        build_with_settings(hit.load(path), "model")


def test_dynamic_dim_outside_the_sub_batch_is_refused() -> None:
    root = hit.load(INPUTS / "dynamic_mean.i")
    with pytest.raises(HitError, match=r"dim = 0 is outside the 0|no sub-batch axis"):
        build_with_settings(root, "model")
    root.child("Models").child("model").params["dim"].text = "1"
    with pytest.raises(HitError, match="dim = 1 is outside the 1 sub-batch axes"):
        build_with_settings(root, "model", {"a": (5,)})


def test_a_bad_shape_spec_names_its_line(tmp_path) -> None:
    path = tmp_path / "bad.i"
    path.write_text((INPUTS / "invariant.i").read_text().replace("'(2; 3)'", "'(2; three)'"))
    with pytest.raises(HitError, match=r"bad\.i:4: .*sub-batch sizes must be positive"):
        build_with_settings(hit.load(path), "model")


def test_inputs_with_different_sub_batches_are_refused() -> None:
    root = hit.load(INPUTS / "composed.i")
    with pytest.raises(HitError, match="different sub-batch axes"):
        build_with_settings(root, "shift", {"eg": (3,), "e0": (2,)})
