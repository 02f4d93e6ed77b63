"""What to compile: derivative pairs (-d), promoted parameters (-p), the graphs they make
(--graphs), the graphs with an in-place variant (--into), the parameters that may be given
per point (--per-point), each graph then with a per-point variant, and the target devices."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from .. import artifact
from ..cli import parse_device
from ..errors import Neml2Error
from ..models import Model
from ..models.base import Pair

#: The name and file suffix of a graph's in-place variant (``forward_into.pt2``).
INTO_SUFFIX = "_into"
#: The name and file suffix of a graph's per-point variant (``forward_per_point.pt2``; its
#: in-place variant is ``forward_per_point_into.pt2``).
PER_POINT_SUFFIX = "_per_point"


@dataclass(frozen=True)
class Selection:
    """What to compile: derivative pairs (-d), promoted parameters (-p), in model order,
    and the graphs --graphs keeps of those they allow (None: all of them)."""

    pairs: list[Pair]
    params: list[str]
    only: list[str] | None = None
    #: graphs that also get an in-place variant on the CPU (--into)
    into: tuple[str, ...] = ()
    #: promoted parameters that may be given per point (--per-point), in ``params`` order;
    #: every graph then has a per-point variant
    per_point: tuple[str, ...] = ()
    #: graphs whose per-point variant also gets an in-place variant on the CPU (--into)
    per_point_into: tuple[str, ...] = ()

    def graphs(self) -> list[str]:
        allowed = allowed_graphs(bool(self.pairs), bool(self.params))
        return [g for g in allowed if self.only is None or g == "forward" or g in self.only]

    def into_graphs(self, device: torch.device) -> list[str]:
        """The graphs compiled with an in-place variant for ``device`` (CPU only)."""
        return [g for g in self.graphs() if g in self.into] if device.type == "cpu" else []

    def per_point_into_graphs(self, device: torch.device) -> list[str]:
        """The graphs whose per-point variant has an in-place variant for ``device``."""
        if device.type != "cpu" or not self.per_point:
            return []
        return [g for g in self.graphs() if g in self.per_point_into]

    def jobs(self, device: torch.device) -> list[str]:
        """What to compile for ``device``: each graph, ``<graph>_into`` variants, and with
        --per-point each ``<graph>_per_point`` and ``<graph>_per_point_into``."""
        jobs = self.graphs() + [g + INTO_SUFFIX for g in self.into_graphs(device)]
        if self.per_point:
            jobs += [g + PER_POINT_SUFFIX for g in self.graphs()]
            jobs += [g + PER_POINT_SUFFIX + INTO_SUFFIX for g in self.per_point_into_graphs(device)]
        return jobs


def allowed_graphs(pairs: bool, params: bool) -> list[str]:
    """The graphs -d (``pairs``) and -p (``params``) make, in the contract's order."""
    wanted = {
        "forward": True,
        "jvp": pairs,
        "jacobian": pairs,
        "param_jacobian": pairs and params,
        "param_vjp": params,
    }
    return [g for g in artifact.GRAPHS if wanted[g]]


#: The options a graph needs, for the message of a --graphs name they were not given for.
GRAPH_NEEDS = {"jvp": "-d", "jacobian": "-d", "param_jacobian": "-d and -p", "param_vjp": "-p"}


def select_graphs(specs: Sequence[str], pairs: list[Pair], params: list[str]) -> list[str] | None:
    """The --graphs names, each a graph that -d and -p make (forward is always compiled);
    None when --graphs was not given."""
    if not specs:
        return None
    allowed = allowed_graphs(bool(pairs), bool(params))
    for spec in specs:
        if spec not in artifact.GRAPHS:
            raise Neml2Error(
                f"--graphs {spec}: no such graph; graphs: {', '.join(artifact.GRAPHS)}"
            )
        if spec not in allowed:
            raise Neml2Error(
                f"--graphs {spec}: {spec} needs {GRAPH_NEEDS[spec]}; "
                f"with these options: {', '.join(allowed)}"
            )
    return [g for g in allowed if g in specs]


def select_into(specs: Sequence[str], graphs: Sequence[str]) -> tuple[str, ...]:
    """The --into names, each a graph that is compiled, in the contract's order."""
    for spec in specs:
        if spec not in artifact.GRAPHS:
            raise Neml2Error(f"--into {spec}: no such graph; graphs: {', '.join(artifact.GRAPHS)}")
        if spec not in graphs:
            raise Neml2Error(
                f"--into {spec}: {spec} is not compiled (compiled: {', '.join(graphs)})"
            )
    return tuple(g for g in graphs if g in specs)


def select_pairs(model: Model, specs: Sequence[str]) -> list[Pair]:
    """``of:wrt`` pairs; an empty side matches every name, so ``:`` selects all pairs."""
    available = [(o.name, i.name) for o in model.outputs for i in model.inputs]
    chosen: set[Pair] = set()
    for spec in specs:
        of, sep, wrt = spec.partition(":")
        matches = [(o, i) for o, i in available if sep and of in ("", o) and wrt in ("", i)]
        if not matches:
            listed = ", ".join(f"{o}:{i}" for o, i in available)
            raise Neml2Error(
                f"-d {spec}: model '{model.name}' has no derivative pair '{spec}'; "
                f"pairs (output:input): {listed}, or ':' for all"
            )
        chosen.update(matches)
    return [pair for pair in available if pair in chosen]


def select_params(model: Model, specs: Sequence[str]) -> list[str]:
    """Parameter names, given in full (``model.E``), by symbol (``E``) or ``:`` for all."""
    names = list(model.parameters)
    chosen: set[str] = set()
    for spec in specs:
        if spec == ":":
            chosen.update(names)
        elif spec in names:
            chosen.add(spec)
        elif f"{model.name}.{spec}" in names:
            chosen.add(f"{model.name}.{spec}")
        else:
            listed = ", ".join(names) or "none"
            raise Neml2Error(
                f"-p {spec}: model '{model.name}' has no parameter '{spec}'; "
                f"parameters: {listed}, or ':' for all"
            )
    return [name for name in names if name in chosen]


def select_per_point(model: Model, specs: Sequence[str], params: Sequence[str]) -> list[str]:
    """The --per-point names, each a parameter promoted with -p (given in full, by symbol
    or ``:`` for every promoted parameter), in ``params`` order."""
    chosen: set[str] = set()
    for spec in specs:
        if spec == ":":
            if not params:
                raise Neml2Error("--per-point :: no parameter is promoted; add -p NAME or -p :")
            chosen.update(params)
            continue
        name = next((n for n in (spec, f"{model.name}.{spec}") if n in params), None)
        if name is None:
            known = spec in model.parameters or f"{model.name}.{spec}" in model.parameters
            reason = (
                f"'{spec}' is not promoted; add -p {spec}"
                if known
                else f"model '{model.name}' has no parameter '{spec}'"
            )
            listed = ", ".join(params) or "none"
            raise Neml2Error(
                f"--per-point {spec}: {reason} (promoted parameters: {listed}, or ':' for all)"
            )
        chosen.add(name)
    return [name for name in params if name in chosen]


def parse_devices(specs: Sequence[str]) -> list[torch.device]:
    """One device per device type, each available here."""
    devices: list[torch.device] = []
    for spec in specs:
        device = parse_device(spec)
        if any(d.type == device.type for d in devices):
            raise Neml2Error(
                f"--device {spec}: device type '{device.type}' given twice; "
                "one artifact is built per device type"
            )
        devices.append(device)
    return devices
