"""Reading a model's block of an input file: an option's spelling among its aliases, one
variable name, the ``from`` and ``to`` of a combining model, distinct variable names, a
tensor-valued option, and finding the ``[Models/<name>]`` block and the file's root."""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch

from ...errors import HitError
from ...hit import _NUMBER, Section
from ...tensors import base_shape
from .model import Model


def spelling(section: Section, *keys: str) -> str | None:
    """Which of several spellings of one option the block uses (NEML2's first, then
    aliases); None when it uses none. Two spellings of one option are an error."""
    given = [k for k in keys if k in section.params]
    if len(given) > 1:
        raise section.error(
            given[1],
            f"parameter '{given[1]}': the same option as '{given[0]}'; give only one of them",
        )
    return given[0] if given else None


def variable_name(section: Section, key: str, default: str) -> str:
    """The variable name a key sets (one word), or ``default`` when the key is not given."""
    value = section.string(key, default)
    if not value.strip() or len(value.split()) != 1:
        raise section.error(key, f"parameter '{key}': expected one variable name, got '{value}'")
    return value.strip()


def from_and_to(
    section: Section, default_to: str | None = None, distinct: bool = True
) -> tuple[list[str], str]:
    """A combining model's ``from`` names (at least one, each once unless ``distinct`` is
    False) and its one ``to`` name (``default_to`` when absent; required when None),
    which must not be one of them."""
    sources = section.strings("from")
    if not sources:
        raise section.error("from", "parameter 'from': expected at least one variable name")
    if distinct:
        for index, source in enumerate(sources):
            if source in sources[:index]:
                raise section.error("from", f"parameter 'from': '{source}' is listed twice")
    if default_to is None:
        section.get("to")
    target = variable_name(section, "to", default_to or "")
    if target in sources:
        raise section.error("to", f"parameter 'to': '{target}' is also an input (listed in 'from')")
    return sources, target


def check_distinct(section: Section, names: Mapping[str, str]) -> None:
    """Refuse a variable name used for two roles (key -> name) of one model."""
    seen: dict[str, str] = {}
    for key, name in names.items():
        if name in seen:
            raise section.error(
                key,
                f"parameter '{key}': variable name '{name}' is already used for '{seen[name]}'",
            )
        seen[name] = key


def model_section(root: Section, name: str) -> Section:
    """The ``[Models/<name>]`` block of a parsed input file."""
    models = root.child("Models")
    if models is None:
        raise HitError(root.path, 1, f"no [Models] block: expected [Models] containing [{name}]")
    section = models.child(name)
    if section is None:
        defined = ", ".join(models.children) or "none"
        raise HitError(
            root.path, models.line, f"[Models] has no model '{name}'; models defined: {defined}"
        )
    return section


def root_of(section: Section) -> Section:
    """The file-level section above ``section``."""
    while section.parent is not None:
        section = section.parent
    return section


def tensor_option(
    section: Section, key: str, type_name: str, default: torch.Tensor | float | None = None
) -> torch.Tensor:
    """A tensor-valued option of NEML2 type ``type_name`` (see :mod:`neml2.tensors`).

    The value is either written in place, as many numbers as the type has components
    (one for a Scalar), or the name of a ``[Tensors]`` block, whose tensor may carry
    leading axes (a table of values, for instance) before its base shape. ``default``
    applies when the key is absent; without one the key is required.
    """
    from ...tensor_blocks import resolve_tensor  # the [Tensors] reader builds on this module

    shape = base_shape(type_name)
    if key not in section.params:
        if default is None:
            raise section.error(None, f"[{section.full_name}]: missing required parameter '{key}'")
        return torch.as_tensor(default, dtype=Model.dtype).expand(shape).clone()
    words = section.strings(key)
    if all(_NUMBER.fullmatch(w) for w in words):
        size = math.prod(shape)
        if len(words) != size:
            raise section.error(
                key,
                f"parameter '{key}': a {type_name} has {size} component"
                f"{'s' if size != 1 else ''}, got {len(words)} numbers",
            )
        values = [section.finite(key, w) for w in words]
        return torch.tensor(values, dtype=Model.dtype).reshape(shape)
    if len(words) != 1:
        raise section.error(
            key,
            f"parameter '{key}': expected {type_name} numbers or the name of a [Tensors] "
            f"block, got '{section.string(key)}'",
        )
    return resolve_tensor(section, key, words[0], type_name)
