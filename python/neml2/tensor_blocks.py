"""The ``[Tensors]`` and ``[Data]`` blocks of an input file: named tensors that model
options refer to by name."""

from __future__ import annotations

import torch

from .hit import Section


def resolve_tensor(section: Section, key: str, name: str, type_name: str) -> torch.Tensor:
    """The tensor of ``[Tensors/<name>]`` for option ``key`` of ``section``, whose trailing
    dimensions are the base shape of ``type_name``."""
    raise section.error(key, f"parameter '{key}': no [Tensors] block named '{name}'")
