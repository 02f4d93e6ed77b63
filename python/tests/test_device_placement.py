"""What a graph computes stays on the graph's device.

A graph exported for a GPU may copy constants and factory tensors (``eye``, ``zeros``) to
the device, which Inductor turns into device constants. A value the graph *computes* on
the CPU and then copies over is different: Inductor fuses the copy into the GPU kernel that
uses it, which then reads host memory and fails (torch 2.11: "Pointer argument cannot be
accessed from Triton (cpu tensor?)"). Exporting on the ``meta`` device shows such values
without a GPU: every tensor not on ``meta`` is on the CPU.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from neml2 import compile as neml2_compile

from .conftest import REPO

CRYSTAL = REPO / "tests" / "neml2_inputs" / "crystal"
#: torch ops that make a tensor from nothing (a constant the copy turns into a device one)
FACTORIES = {"aten.eye.default", "aten.zeros.default", "aten.ones.default", "aten.full.default"}


def computed_on_host(file: Path, graph: str = "forward") -> list[str]:
    """The nodes of ``graph``, exported for the ``meta`` device, that compute a CPU tensor
    which a device copy then moves to ``meta``."""
    prep = neml2_compile.prepare(neml2_compile.Request(file=str(file), model="model"))
    device = torch.device("meta")
    module = neml2_compile.Graph(prep.model, graph, prep.sel, prep.dtype).to(device)
    batch = torch.export.Dim("batch", min=0)
    shapes = tuple(
        {0: batch} if s["role"] in neml2_compile.BATCHED_ROLES else None for s in module.args
    )
    program = torch.export.export(
        module, module.example_args(device), dynamic_shapes=(shapes,), strict=False
    )
    found = []
    for node in program.graph.nodes:
        value = node.meta.get("val")
        if node.op != "call_function" or str(node.target) in FACTORIES:
            continue
        if not isinstance(value, torch.Tensor) or value.device.type != "cpu":
            continue
        if any(
            isinstance(u.meta.get("val"), torch.Tensor) and u.meta["val"].device == device
            for u in node.users
        ):
            found.append(f"{node.name} ({node.target})")
    return found


@pytest.mark.parametrize("name", ["resolved_shear.i", "plastic_vorticity.i"])
def test_the_schmid_tensors_are_formed_on_the_device(name: str) -> None:
    # the slip geometry is a CPU constant; its products must be formed after the copy
    assert computed_on_host(CRYSTAL / name) == []
