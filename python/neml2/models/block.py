"""The leaf that most built-in models subclass, :class:`Block` (variables and parameters
declared by tables, one ``compute`` with analytic derivatives, second derivatives for
NEML2's ``Normality``), the shapes ``SR2`` and ``SCALAR``, and the Mandel-vector helpers
``identity``, ``deviator``, ``projector``, ``batched`` and ``outer``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import torch

from ..hit import Section
from .base import (
    Blocks,
    Blocks2,
    Leaf,
    Model,
    SecondOrder,
    Tensors,
    Variable,
    check_distinct,
    variable_name,
)

SR2 = (6,)


SCALAR: tuple[int, ...] = ()


def identity(like: torch.Tensor) -> torch.Tensor:
    """``I`` as a Mandel vector, built by factory ops rather than ``torch.tensor``: an
    exported graph holds a ``torch.tensor`` as a constant, and a constant inside the
    body of ImplicitUpdate's ``while_loop`` cannot be lowered by AOTInductor."""
    ones = torch.ones(3, dtype=like.dtype, device=like.device)
    return torch.cat([ones, torch.zeros_like(ones)])


def deviator(a: torch.Tensor) -> torch.Tensor:
    trace = a[:, 0] + a[:, 1] + a[:, 2]
    return a - (trace / 3).unsqueeze(-1) * identity(a)


def projector(like: torch.Tensor) -> torch.Tensor:
    """d dev(a) / d a."""
    eye = torch.eye(6, dtype=like.dtype).to(like.device)
    ones = identity(like)
    return eye - ones.unsqueeze(-1) * ones / 3


def batched(block: torch.Tensor, n: int) -> torch.Tensor:
    """A point-independent block repeated for every point, ``(n, *block)``."""
    return block.unsqueeze(0).expand((n, *block.shape)).clone()


def outer(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a.unsqueeze(-1) * b.unsqueeze(-2)


class Block(Leaf):
    """A leaf declared by tables: variable keys with defaults and shapes, and parameters.

    ``inputs_spec`` / ``outputs_spec``: ``(key, default name, shape)``; a default of
    None makes the key required. ``params_spec``: ``(key, default)``, a default of None
    making it required; every parameter is promotable (``-p``) and named
    ``<block>.<key>``. :meth:`compute` gets the inputs and parameters by key.
    """

    inputs_spec: ClassVar[tuple[tuple[str, str | None, tuple[int, ...]], ...]] = ()
    outputs_spec: ClassVar[tuple[tuple[str, str | None, tuple[int, ...]], ...]] = ()
    params_spec: ClassVar[tuple[tuple[str, float | None], ...]] = ()
    extra_options: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "options" in cls.__dict__:
            return
        cls.options = frozenset(
            {k for k, _, _ in (*cls.inputs_spec, *cls.outputs_spec)}
            | {k for k, _ in cls.params_spec}
            | cls.extra_options
        )

    def __init__(
        self,
        name: str,
        names: Mapping[str, str],
        values: Mapping[str, float],
        section: Section | None = None,
    ) -> None:
        #: key -> variable name
        self.names = dict(names)
        self.configure(section)
        specs = self.variable_specs()
        inputs = [Variable(self.names[k], shape) for k, shape in specs[0]]
        outputs = [Variable(self.names[k], shape) for k, shape in specs[1]]
        params = {
            f"{name}.{k}": torch.tensor(float(values[k]), dtype=torch.float64) for k in values
        }
        super().__init__(name, inputs, outputs, params)

    def configure(self, section: Section | None) -> None:
        """Read options other than variables and parameters (subclasses)."""

    def variable_specs(
        self,
    ) -> tuple[list[tuple[str, tuple[int, ...]]], list[tuple[str, tuple[int, ...]]]]:
        return (
            [(k, s) for k, _, s in self.inputs_spec if k in self.names],
            [(k, s) for k, _, s in self.outputs_spec if k in self.names],
        )

    @classmethod
    def default_names(cls, section: Section) -> dict[str, str]:
        names: dict[str, str] = {}
        for key, default, _ in (*cls.inputs_spec, *cls.outputs_spec):
            if default is None and key not in section.params:
                continue
            names[key] = variable_name(section, key, default or key)
        return names

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        names = cls.default_names(section)
        check_distinct(section, names)
        values = {
            key: section.number(key) if default is None else section.number(key, default)
            for key, default in cls.params_spec
        }
        return cls(section.name, names, values, section)

    def kernel(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        xs = {k: x[v] for k, v in self.names.items() if v in x and self._is_input(k)}
        ps = {k: p[f"{self.name}.{k}"] for k, _ in self.params_spec}
        out, jac, pjac = self.compute(xs, ps, derivatives)
        n = next(iter(x.values())).shape[0]
        rename = self.names
        return (
            {rename[k]: v for k, v in out.items()},
            {rename[o]: {rename[i]: b for i, b in row.items()} for o, row in jac.items()},
            {
                rename[o]: {f"{self.name}.{q}": _full(b, n) for q, b in row.items()}
                for o, row in pjac.items()
            },
        )

    def _is_input(self, key: str) -> bool:
        return any(k == key for k, _ in self.variable_specs()[0])

    def compute(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor], derivatives: bool
    ) -> tuple[Tensors, Blocks, Blocks]:
        raise NotImplementedError

    # --- second derivatives ------------------------------------------------------------

    def compute_second(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]
    ) -> dict[str, dict[tuple[str, str], torch.Tensor]]:
        """The non-zero second derivatives ``[output key][(a, b)]`` by input and parameter
        keys, each pair in one order (the other is its transpose); a block may broadcast
        to ``(B, *of, *a, *b)``. A type with second derivatives overrides this."""
        raise NotImplementedError

    def second_order_missing(self) -> list[str]:
        if type(self).compute_second is Block.compute_second:
            return super().second_order_missing()
        return []

    def second_order(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]
    ) -> SecondOrder:
        xs = {k: x[v] for k, v in self.names.items() if v in x and self._is_input(k)}
        ps = {k: p[f"{self.name}.{k}"] for k, _ in self.params_spec}
        out, jac, pjac = self.compute(xs, ps, True)
        n = next(iter(x.values())).shape[0]
        shapes = {k: v.shape[1:] for k, v in xs.items()}
        shapes.update({k: v.shape for k, v in ps.items()})

        def arg(key: str) -> str:
            return self.names[key] if key in xs else f"{self.name}.{key}"

        first: Blocks = {}
        for o, v in out.items():
            row = {**jac.get(o, {}), **pjac.get(o, {})}
            of = tuple(v.shape[1:])
            first[self.names[o]] = {arg(a): b.expand((n, *of, *shapes[a])) for a, b in row.items()}
        second: Blocks2 = {self.names[o]: {} for o in out}
        for o, pairs in self.compute_second(xs, ps).items():
            of = tuple(out[o].shape[1:])
            rows = second[self.names[o]]
            for (a, b), block in pairs.items():
                block = block.expand((n, *of, *shapes[a], *shapes[b]))
                rows.setdefault(arg(a), {})[arg(b)] = block
                if a != b:
                    rows.setdefault(arg(b), {})[arg(a)] = _transpose(
                        block, len(of), len(shapes[a]), len(shapes[b])
                    )
        return SecondOrder({self.names[o]: v for o, v in out.items()}, first, second)


def _transpose(block: torch.Tensor, nof: int, na: int, nb: int) -> torch.Tensor:
    """``(B, *of, *a, *b)`` as ``(B, *of, *b, *a)``."""
    lead = list(range(1 + nof))
    a = list(range(1 + nof, 1 + nof + na))
    b = list(range(1 + nof + na, 1 + nof + na + nb))
    return block.permute(lead + b + a)


def _full(block: torch.Tensor, n: int) -> torch.Tensor:
    """A parameter block as ``(n, *of)``: a 0-d (point-independent) one is repeated."""
    return block if block.dim() > 0 and block.shape[0] == n else batched(block, n)
