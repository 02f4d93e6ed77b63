"""Names a host code gives the compiled boundary: ``neml2-compile --rename-input``,
``--rename-output`` and ``--rename-parameter`` (doc/authoring.md, "Renaming the boundary").

The graphs are positional, so a rename changes only model_meta.json: every entry of
``inputs``, ``outputs`` and ``parameters`` that was renamed carries its new ``name`` and
the original one as ``renamed_from``, and the derivative pairs and the graphs' argument
and return slots use the new names (doc/artifacts.md). The model itself, ``-d`` and
``-p`` keep the names of the input file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import Neml2Error

#: The boundaries that can be renamed, with the option that renames each.
FLAGS = {
    "inputs": "--rename-input",
    "outputs": "--rename-output",
    "parameters": "--rename-parameter",
}
#: A new name: a letter or ``_``, then letters, digits, ``_``, ``.`` and ``/``; no
#: whitespace, quotes or ``:`` (which separates the two names of a derivative pair).
VALID_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_./]*")
#: How a message lists each boundary's names.
LISTED = {"inputs": "inputs", "outputs": "outputs", "parameters": "promoted parameters"}
#: Singular of each boundary, for messages.
SINGULAR = {"inputs": "input", "outputs": "output", "parameters": "parameter"}

Meta = dict[str, Any]


@dataclass(frozen=True)
class Renames:
    """Original name -> new name, per boundary; a name that keeps its name is left out."""

    inputs: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    parameters: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, dict[str, str]]:
        """The maps as plain JSON (the fingerprint's ``renames`` entry)."""
        return {"inputs": self.inputs, "outputs": self.outputs, "parameters": self.parameters}


def parse_spec(flag: str, spec: str) -> tuple[str, str]:
    """``OLD:NEW`` split in two; a spec without exactly one ``:`` or with an empty side is
    refused."""
    old, sep, new = spec.partition(":")
    if not sep or not old or not new or ":" in new:
        raise Neml2Error(f"{flag} {spec}: expected OLD:NEW (one ':' between two names)")
    return old, new


def resolve(
    model: str,
    specs: Mapping[str, Sequence[str]],
    names: Mapping[str, Sequence[str]],
    resolve_old: Mapping[str, Any] | None = None,
    unknown_hint: Mapping[str, str] | None = None,
) -> Renames:
    """The renames that the ``OLD:NEW`` specs of each boundary (``specs["inputs"]``, ...)
    ask for, checked against the boundary's names (``names["inputs"]``, ...).

    ``resolve_old[boundary]``, when given, maps a spec's OLD to a name of the boundary or
    None (the parameters accept ``E`` for ``model.E``, as ``-p`` does); ``unknown_hint``
    adds advice to the message of an unknown OLD. Every new name must be valid and differ
    from every other name of the boundary (inputs, outputs and parameters together) after
    renaming.
    """
    maps: dict[str, dict[str, str]] = {b: {} for b in FLAGS}
    for boundary, flag in FLAGS.items():
        known = list(names.get(boundary, ()))
        for spec in specs.get(boundary, ()):
            old, new = parse_spec(flag, spec)
            finder = (resolve_old or {}).get(boundary)
            name = finder(old) if finder is not None else (old if old in known else None)
            if name is None:
                listed = ", ".join(known) or "none"
                hint = (unknown_hint or {}).get(boundary, "")
                raise Neml2Error(
                    f"{flag} {spec}: model '{model}' has no {LISTED[boundary][:-1]} '{old}'; "
                    f"{LISTED[boundary]}: {listed}{hint}"
                )
            if name in maps[boundary]:
                raise Neml2Error(
                    f"{flag} {spec}: '{name}' is renamed twice "
                    f"(to '{maps[boundary][name]}' and '{new}')"
                )
            if not VALID_NAME.fullmatch(new):
                raise Neml2Error(
                    f"{flag} {spec}: '{new}' is not a valid name (a letter or '_', then "
                    "letters, digits, '_', '.' or '/')"
                )
            maps[boundary][name] = new
    check_collisions(names, maps)
    return Renames(**{b: {o: n for o, n in m.items() if o != n} for b, m in maps.items()})


def check_collisions(
    names: Mapping[str, Sequence[str]], maps: Mapping[str, dict[str, str]]
) -> None:
    """Refuse a new name that another name of the boundary has after renaming (inputs,
    outputs and parameters together: a result, a derivative key or an error message must
    name one thing). Clashes among the model's own names are not a rename's to refuse."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for boundary in FLAGS:
        for name in names.get(boundary, ()):
            groups.setdefault(maps[boundary].get(name, name), []).append((boundary, name))
    for final, group in groups.items():
        renamed = [(b, n) for b, n in group if maps[b].get(n, n) != n]
        if len(group) < 2 or not renamed:
            continue
        boundary, old = renamed[0]
        other_boundary, other = next(e for e in group if e != renamed[0])
        how = (
            "also the new name"
            if maps[other_boundary].get(other, other) != other
            else "already the name"
        )
        raise Neml2Error(
            f"{FLAGS[boundary]} {old}:{final}: '{final}' is {how} of "
            f"{SINGULAR[other_boundary]} '{other}'"
        )


def apply(meta: Meta, renames: Renames | Mapping[str, Mapping[str, str]]) -> Meta:
    """``meta`` with the new names (a new dict; ``meta`` is not changed).

    Each renamed entry of ``inputs``, ``outputs`` and ``parameters`` gets ``renamed_from``
    after its ``name``; pairs and graph slots take the new names by role.
    """
    maps = renames.as_dict() if isinstance(renames, Renames) else dict(renames)
    ins, outs = maps.get("inputs", {}), maps.get("outputs", {})
    params = maps.get("parameters", {})
    if not (ins or outs or params):
        return meta

    def entries(specs: list[dict[str, Any]], table: Mapping[str, str]) -> list[dict[str, Any]]:
        out = []
        for spec in specs:
            if spec["name"] not in table:
                out.append(dict(spec))
                continue
            renamed = {"name": table[spec["name"]], "renamed_from": spec["name"]}
            renamed.update({k: v for k, v in spec.items() if k != "name"})
            out.append(renamed)
        return out

    def pairs(specs: list[dict[str, Any]], wrt: Mapping[str, str]) -> list[dict[str, Any]]:
        return [
            {**d, "of": outs.get(d["of"], d["of"]), "wrt": wrt.get(d["wrt"], d["wrt"])}
            for d in specs
        ]

    def slot(graph: str, s: dict[str, Any], returned: bool) -> dict[str, Any]:
        role = s["role"]
        if role == "derivative":
            wrt = params if graph == "param_jacobian" else ins
            return {**s, "of": outs.get(s["of"], s["of"]), "wrt": wrt.get(s["wrt"], s["wrt"])}
        table: Mapping[str, str] = {
            "input": ins,
            "parameter": params,
            "adjoint": params,
            "cotangent": outs,
            "output": outs,
            "tangent": outs if returned else ins,
        }.get(role, {})
        return {**s, "name": table.get(s["name"], s["name"])} if "name" in s else dict(s)

    def graph(name: str, spec: dict[str, Any]) -> dict[str, Any]:
        renamed = {
            **spec,
            "args": [slot(name, s, False) for s in spec["args"]],
            "returns": [slot(name, s, True) for s in spec["returns"]],
        }
        if isinstance(spec.get("per_point"), dict):  # the graph's per-point variant
            renamed["per_point"] = graph(name, spec["per_point"])
        return renamed

    out = dict(meta)
    out["inputs"] = entries(meta["inputs"], ins)
    out["outputs"] = entries(meta["outputs"], outs)
    out["parameters"] = entries(meta["parameters"], params)
    out["derivatives"] = pairs(meta.get("derivatives", []), ins)
    out["param_derivatives"] = pairs(meta.get("param_derivatives", []), params)
    if "per_point" in meta:
        out["per_point"] = [params.get(name, name) for name in meta["per_point"]]
    out["graphs"] = {name: graph(name, spec) for name, spec in meta["graphs"].items()}
    return out


def originals(specs: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Original name -> new name of the renamed entries of a meta's variable list."""
    return {s["renamed_from"]: s["name"] for s in specs if "renamed_from" in s}
