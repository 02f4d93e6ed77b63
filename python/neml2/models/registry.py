"""The registry of model types: the class each ``type = <name>`` of a ``[Models]`` block
names, and building a model from its block."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from ..hit import Section
from .base import Model

_REGISTRY: dict[str, type[Model]] = {}


def register(cls: type[Model]) -> type[Model]:
    """Class decorator: make ``cls`` buildable from ``type = <cls.type_name>``."""
    _REGISTRY[cls.type_name] = cls
    return cls


def model_types() -> list[str]:
    """The registered type names, sorted."""
    return sorted(_REGISTRY)


def nearest(word: str, choices: Sequence[str]) -> str | None:
    """The choice closest to a misspelt ``word`` (case-insensitive), if any is close."""
    lowered = {c.lower(): c for c in choices}
    match = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[match[0]] if match else None


def build_model(section: Section) -> Model:
    """Build the model described by a ``[Models/<name>]`` block."""
    type_name = section.string("type")
    cls = _REGISTRY.get(type_name)
    if cls is None:
        close = nearest(type_name, model_types())
        hint = f"did you mean '{close}'? " if close else ""
        raise section.error(
            "type",
            f"[{section.full_name}]: unknown model type '{type_name}'; {hint}"
            f"known types: {', '.join(model_types())}",
        )
    for key in section.params:
        if key != "type" and key not in cls.options:
            close = nearest(key, sorted(cls.options))
            hint = f"did you mean '{close}'? " if close else ""
            raise section.error(
                key,
                f"[{section.full_name}]: unknown parameter '{key}' for {type_name}; {hint}"
                f"expected one of: {', '.join(sorted(cls.options))}",
            )
    from .coupling import build_coupled, couplings  # builds on this module

    found = couplings(section)
    return build_coupled(cls, section, found) if found else cls.from_hit(section)
