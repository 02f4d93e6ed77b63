"""Inductor faults that neml2-compile works around, with the real Inductor call replaced
by one that fails the way the fault does (the torch here does not show it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from neml2 import compile as neml2_compile

from .conftest import FIXTURES

#: The two ways the planner's estimate fails (torch 2.11: the first on the crystal model's CPU
#: graph, the second on its CUDA graph).
FAULTS = (
    "ValueError: End index 234 out of bounds [0, 233]",
    "ValueError: Start index 64 out of bounds [0, 59]",
)


def elastic_graph() -> tuple[neml2_compile.Graph, torch.device]:
    file = FIXTURES / "forward_single" / "model.i"
    prep = neml2_compile.prepare(neml2_compile.Request(file=str(file), model="model"))
    device = torch.device("cpu")
    return neml2_compile.Graph(prep.model, "forward", prep.sel, prep.dtype).to(device), device


@pytest.mark.parametrize("fault", FAULTS)
def test_the_buffer_reuse_fault_compiles_again_without_buffer_reuse(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fault: str
) -> None:
    calls: list[dict[str, Any]] = []

    def inductor(program: Any, package_path: str, inductor_configs: dict[str, Any]) -> str:
        calls.append(dict(inductor_configs))
        if inductor_configs.get("allow_buffer_reuse", True):
            raise RuntimeError(fault)
        return package_path

    monkeypatch.setattr(torch._inductor, "aoti_compile_and_package", inductor)
    module, device = elastic_graph()
    neml2_compile.compile_graph(module, device, tmp_path / "forward.pt2")
    assert len(calls) == 2
    assert "allow_buffer_reuse" not in calls[0]
    assert calls[1] == {**calls[0], "allow_buffer_reuse": False}


def test_another_inductor_error_is_not_retried(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls = []

    def inductor(program: Any, package_path: str, inductor_configs: dict[str, Any]) -> str:
        calls.append(inductor_configs)
        raise RuntimeError("some other lowering error")

    monkeypatch.setattr(torch._inductor, "aoti_compile_and_package", inductor)
    module, device = elastic_graph()
    with pytest.raises(RuntimeError, match="some other lowering error"):
        neml2_compile.compile_graph(module, device, tmp_path / "forward.pt2")
    assert len(calls) == 1
