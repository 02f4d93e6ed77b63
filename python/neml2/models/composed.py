"""ComposedModel: several models of one ``[Models]`` block chained by variable name.

An output of one model feeds every model that has an input of the same name; inputs
that no model produces are the composed model's inputs. The models run in dependency
order (the listed order where it leaves a choice), and derivatives follow the chain
rule: ``d out / d u = sum_w J[out][w] . d w / d u`` over the inputs ``w`` of the model
producing ``out``. Parameters keep the names their own models give them (``elastic.E``).
A composed model is implicit when any of its models is; its status is converged where
every solve converged, with the largest residual.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar

import torch

from ..hit import Section
from .base import Blocks, Evaluation, Model, SecondOrder, Status, Variable, contract, spelling
from .registry import build_model, register

#: Batch dependence of each non-zero derivative block: variable -> wrt -> batched.
Flags = dict[str, dict[str, bool]]

STUB_TYPE = "AOTIModel"


def _merge(row: dict[str, bool], key: str, batched: bool) -> None:
    row[key] = row.get(key, False) or batched


@register
class ComposedModel(Model):
    """Keys: ``models`` (block names in the same ``[Models]``), NEML2's
    ``additional_outputs`` (consumed variables to expose as well) or ``outputs``
    (the exact list of outputs)."""

    type_name = "ComposedModel"
    options = frozenset({"models", "outputs", "additional_outputs"})
    #: The composed blocks being built, outermost first, to report one including itself.
    _building: ClassVar[list[str]] = []

    def __init__(self, name: str, models: Sequence[Model], outputs: Sequence[str]) -> None:
        self.models = list(models)
        produced = {v.name: v for m in self.models for v in m.outputs}
        inputs: dict[str, Variable] = {}
        for m in self.models:
            for v in m.inputs:
                if v.name not in produced:
                    inputs.setdefault(v.name, v)
        parameters = {k: v for m in self.models for k, v in m.parameters.items()}
        super().__init__(name, list(inputs.values()), [produced[o] for o in outputs], parameters)
        self._parameter_shapes = {k: v for m in self.models for k, v in m.parameter_shapes.items()}
        self._external = set(inputs)
        self._jflags, self._pflags = self._flags()

    @property
    def implicit(self) -> bool:
        return any(m.implicit for m in self.models)

    def solver_users(self) -> list[Model]:
        return [user for m in self.models for user in m.solver_users()]

    @classmethod
    def from_hit(cls, section: Section) -> Model:
        names = section.strings("models")
        if not names:
            raise section.error("models", "parameter 'models': expected at least one model name")
        block = section.parent
        assert block is not None
        if section.full_name in cls._building:
            chain = " -> ".join(
                [*cls._building[cls._building.index(section.full_name) :], section.full_name]
            )
            raise section.error(
                "models", f"[{section.full_name}]: models include each other: {chain}"
            )
        models: list[Model] = []
        cls._building.append(section.full_name)
        try:
            for index, name in enumerate(names):
                if name in names[:index]:
                    raise section.error("models", f"parameter 'models': '{name}' is listed twice")
                if name == section.name:
                    raise section.error(
                        "models", f"parameter 'models': '{name}' is this model itself"
                    )
                sub = block.child(name)
                if sub is None:
                    defined = ", ".join(n for n in block.children if n != section.name) or "none"
                    raise section.error(
                        "models",
                        f"parameter 'models': no model '{name}' in [{block.full_name}]; "
                        f"models defined: {defined}",
                    )
                if sub.string("type", "") == STUB_TYPE:
                    raise section.error(
                        "models",
                        f"parameter 'models': '{name}' is a compiled model ({STUB_TYPE}); "
                        "compose the source models and compile the composition",
                    )
                models.append(build_model(sub))
            # a model whose parameter is another model's output brings that model in
            listed = list(names)
            for model in models:
                for provider in getattr(model, "providers", ()):
                    if provider not in listed and provider != section.name:
                        listed.append(provider)
                        models.append(build_model(block.children[provider]))
        finally:
            cls._building.pop()
        ordered = _own_axes(section, _order(section, models))
        produced = [v.name for m in ordered for v in m.outputs]
        consumed = {v.name for m in ordered for v in m.inputs}
        key = spelling(section, "outputs", "additional_outputs")
        if key is not None:
            outputs = section.strings(key)
            if key == "additional_outputs":
                outputs = [o for o in produced if o not in consumed or o in outputs] + [
                    o for o in outputs if o not in produced
                ]
            for out in outputs:
                if out not in produced:
                    raise section.error(
                        key,
                        f"parameter '{key}': '{out}' is not an output of any of "
                        f"{', '.join(names)}; outputs: {', '.join(produced)}",
                    )
            if len(set(outputs)) != len(outputs) or not outputs:
                raise section.error(key, f"parameter '{key}': expected distinct variable names")
        else:
            outputs = [o for o in produced if o not in consumed]
        return cls(section.name, ordered, outputs)

    def with_sub_batch(self, subs: Mapping[str, tuple[int, ...]]) -> Model:
        """Propagate sub-batch axes from the inputs through the models in order: each one
        gets the axes of its inputs (given here or produced upstream)."""
        known = {name: shape for name, shape in subs.items() if shape}
        models: list[Model] = []
        for m in self.models:
            own = {v.name: known[v.name] for v in m.inputs if v.name in known}
            m = m.with_sub_batch(own)
            known.update({v.name: v.sub_batch for v in m.outputs if v.sub_batch})
            models.append(m)
        if all(a is b for a, b in zip(models, self.models, strict=True)):
            return self
        return ComposedModel(self.name, models, [o.name for o in self.outputs])

    # --- static batch dependence of the chained blocks -------------------------------

    def _flags(self) -> tuple[Flags, Flags]:
        jflags: Flags = {}
        pflags: Flags = {}
        for m in self.models:
            for out in m.outputs:
                jrow: dict[str, bool] = {}
                prow: dict[str, bool] = {}
                for param in m.parameters:
                    _merge(prow, param, m.param_jacobian_batched(out.name, param))
                for w in m.inputs:
                    batched = m.jacobian_batched(out.name, w.name)
                    if w.name in self._external:
                        _merge(jrow, w.name, batched)
                        continue
                    for u, b in jflags[w.name].items():
                        _merge(jrow, u, batched or b)
                    for q, b in pflags[w.name].items():
                        _merge(prow, q, batched or b)
                jflags[out.name] = jrow
                pflags[out.name] = prow
        return jflags, pflags

    def jacobian_batched(self, of: str, wrt: str) -> bool:
        return self._jflags[of].get(wrt, False)

    def param_jacobian_batched(self, of: str, param: str) -> bool:
        return self._pflags[of].get(param, False)

    # --- evaluation by the chain rule ------------------------------------------------

    def evaluate(
        self,
        x: Mapping[str, torch.Tensor],
        p: Mapping[str, torch.Tensor],
        jacobian: bool = False,
        param_jacobian: bool = False,
    ) -> Evaluation:
        values = dict(x)
        var_shapes = {v.name: v.shape for m in self.models for v in (*m.inputs, *m.outputs)}
        param_shapes = self.parameter_shapes  # a parameter given per point has one more axis
        chain = jacobian or param_jacobian
        # the non-zero blocks d(variable)/d(composed input) and d(variable)/d(parameter)
        jac: Blocks = {}
        pjac: Blocks = {}
        status: Status | None = None
        for m in self.models:
            ev = m.evaluate({v.name: values[v.name] for v in m.inputs}, p, chain, param_jacobian)
            if ev.status is not None:
                status = ev.status.merge(status)
            values.update(ev.outputs)
            if not chain:
                continue
            for out in m.outputs:
                jac[out.name] = {}
                pjac[out.name] = {}
                if param_jacobian:
                    for param in m.parameters:
                        _add(pjac[out.name], param, ev.param_jacobian[out.name][param])
                for w in m.inputs:
                    block = ev.jacobian[out.name][w.name]
                    if w.name in self._external:
                        _add(jac[out.name], w.name, block)
                        continue
                    batched = m.jacobian_batched(out.name, w.name)
                    totals = [(jac, self._jflags, var_shapes)]
                    if param_jacobian:
                        totals.append((pjac, self._pflags, param_shapes))
                    for blocks, flags, shapes in totals:
                        for u, inner in blocks[w.name].items():
                            term = contract(
                                block,
                                batched,
                                inner,
                                flags[w.name][u],
                                (out.size, w.size, math.prod(shapes[u])),
                                (*out.shape, *shapes[u]),
                            )
                            _add(blocks[out.name], u, term)
        result = Evaluation({o.name: values[o.name] for o in self.outputs}, status=status)
        like = next(iter(x.values()))
        if jacobian:
            result.jacobian = {
                o.name: {
                    u.name: _full(jac[o.name], u.name, (*o.shape, *u.shape), like)
                    for u in self.inputs
                }
                for o in self.outputs
            }
        if param_jacobian:
            result.param_jacobian = {
                o.name: {
                    q: _full(pjac[o.name], q, (*o.shape, *param_shapes[q]), like)
                    for q in self.parameters
                }
                for o in self.outputs
            }
        return result

    # --- second derivatives by the chain rule -----------------------------------------

    def second_order_missing(self) -> list[str]:
        return [name for m in self.models for name in m.second_order_missing()]

    def second_order(
        self, x: Mapping[str, torch.Tensor], p: Mapping[str, torch.Tensor]
    ) -> SecondOrder:
        """The second-order chain rule over the models in order. With ``T[c][a]`` the
        derivative of a model's argument ``c`` by a composed argument ``a`` (the identity
        where ``c`` is a composed input or a parameter):
        ``d2 out / da db = sum_c J[out][c] . d2 c / da db
        + sum_c,c' H[out][c][c'] : T[c][a] T[c'][b]``."""
        values = dict(x)
        n = next(iter(x.values())).shape[0]
        shapes = {v.name: v.shape for m in self.models for v in (*m.inputs, *m.outputs)}
        shapes.update({q: tuple(t.shape) for q, t in p.items()})
        size = {k: math.prod(s) for k, s in shapes.items()}
        # per produced variable, flattened: (n, v, a) and (n, v, a, b)
        first: dict[str, dict[str, torch.Tensor]] = {}
        second: dict[str, dict[tuple[str, str], torch.Tensor]] = {}
        for m in self.models:
            so = m.second_order({v.name: values[v.name] for v in m.inputs}, p)
            values.update(so.outputs)
            for out in m.outputs:
                o = out.name
                d1: dict[str, torch.Tensor] = {}
                d2: dict[tuple[str, str], torch.Tensor] = {}
                for c, block in so.first.get(o, {}).items():
                    J = block.reshape(n, size[o], size[c])
                    if c not in first:  # a composed input or a parameter
                        _add(d1, c, J)
                        continue
                    for a, inner in first[c].items():
                        _add(d1, a, (J.unsqueeze(-1) * inner.unsqueeze(1)).sum(2))
                    for ab, inner in second[c].items():
                        term = J.reshape(n, size[o], size[c], 1) * inner.reshape(
                            n, 1, size[c], size[ab[0]] * size[ab[1]]
                        )
                        _add(d2, ab, term.sum(2).reshape(n, size[o], size[ab[0]], size[ab[1]]))
                for c, row in so.second.get(o, {}).items():
                    for c2, block in row.items():
                        H = block.reshape(n, size[o], size[c], size[c2])
                        for a, left in first.get(c, {c: None}).items():
                            for b, right in first.get(c2, {c2: None}).items():
                                _add(d2, (a, b), _sandwich(H, left, right))
                first[o], second[o] = d1, d2
        result = SecondOrder({o.name: values[o.name] for o in self.outputs}, {}, {})
        for out in self.outputs:
            o, of = out.name, out.shape
            result.first[o] = {
                a: block.reshape((n, *of, *shapes[a])) for a, block in first[o].items()
            }
            rows: dict[str, dict[str, torch.Tensor]] = {}
            for (a, b), block in second[o].items():
                rows.setdefault(a, {})[b] = block.reshape((n, *of, *shapes[a], *shapes[b]))
            result.second[o] = rows
        return result


def _sandwich(
    H: torch.Tensor, left: torch.Tensor | None, right: torch.Tensor | None
) -> torch.Tensor:
    """``H[o][c][c'] left[c][a] right[c'][b]`` per point, ``(n, o, a, b)``; None is the
    identity. Multiply-and-sum, as :func:`~neml2.models.base.contract` explains."""
    if left is not None:  # (n, o, c, c') by (n, c, a) -> (n, o, a, c')
        H = (H.unsqueeze(3) * left.unsqueeze(1).unsqueeze(-1)).sum(2)
    if right is not None:  # (n, o, a, c') by (n, c', b) -> (n, o, a, b)
        H = (H.unsqueeze(-1) * right.unsqueeze(1).unsqueeze(1)).sum(3)
    return H


def _add(row: dict, key: object, term: torch.Tensor) -> None:
    """Sum the chain rule's terms (an unbatched term broadcasts against a batched sum)."""
    row[key] = row[key] + term if key in row else term


def _full(
    row: Mapping[str, torch.Tensor], key: str, shape: tuple[int, ...], like: torch.Tensor
) -> torch.Tensor:
    """The block, or an unbatched zero block where nothing depends on ``key``."""
    if key in row:
        return row[key]
    return torch.zeros(shape, dtype=like.dtype).to(like.device)


def _check_shapes(
    section: Section, models: Sequence[Model], shape_of: Callable[[Variable], tuple[int, ...]]
) -> None:
    """Every variable with one shape (``shape_of``) wherever it appears."""
    seen: dict[str, tuple[tuple[int, ...], str]] = {
        v.name: (shape_of(v), f"an output of '{m.name}'") for m in models for v in m.outputs
    }
    for m in models:
        for v in m.inputs:
            if v.name in seen and seen[v.name][0] != shape_of(v):
                shape, where = seen[v.name]
                raise section.error(
                    "models",
                    f"parameter 'models': variable '{v.name}' has shape {shape} as {where} "
                    f"but {shape_of(v)} as an input of '{m.name}'",
                )
            seen.setdefault(v.name, (shape_of(v), f"an input of '{m.name}'"))


def _own_axes(section: Section, ordered: Sequence[Model]) -> list[Model]:
    """The ordered models with the sub-batch axes that models give their own outputs (one
    entry per slip system of a crystal, for instance) carried to the models downstream."""
    known: dict[str, tuple[int, ...]] = {}
    out: list[Model] = []
    for m in ordered:
        own = {v.name: known[v.name] for v in m.inputs if v.name in known}
        if own:
            try:
                m = m.with_sub_batch(own)
            except ValueError as err:
                raise section.error("models", f"[{section.full_name}]: {err}") from None
        known.update({v.name: v.sub_batch for v in m.outputs if v.sub_batch})
        out.append(m)
    _check_shapes(section, out, lambda v: v.shape)
    return out


def _order(section: Section, models: Sequence[Model]) -> list[Model]:
    """The models in dependency order; each variable produced once and with one shape."""
    producer: dict[str, Model] = {}
    for m in models:
        own = {v.name for v in m.inputs} & {v.name for v in m.outputs}
        if own:
            raise section.error(
                "models",
                f"parameter 'models': '{m.name}' takes '{sorted(own)[0]}' as an input and "
                "returns it; inside a ComposedModel an ImplicitUpdate needs a predictor "
                "(ConstantExtrapolationPredictor) for its unknowns",
            )
        for v in m.outputs:
            if v.name in producer:
                raise section.error(
                    "models",
                    f"parameter 'models': variable '{v.name}' is an output of both "
                    f"'{producer[v.name].name}' and '{m.name}'",
                )
            producer[v.name] = m
    # sub-batch axes that a model gives its outputs reach their consumers only once the
    # models are ordered (_own_axes), so base shapes are compared here and full ones there
    _check_shapes(section, models, lambda v: v.base)
    ordered: list[Model] = []
    pending = list(models)
    while pending:
        placed = {id(m) for m in ordered}
        ready = next(
            (
                m
                for m in pending
                if all(v.name not in producer or id(producer[v.name]) in placed for v in m.inputs)
            ),
            None,
        )
        if ready is None:
            cycle = ", ".join(m.name for m in pending)
            raise section.error(
                "models",
                f"parameter 'models': the outputs and inputs of {cycle} depend on each other "
                "in a cycle",
            )
        ordered.append(ready)
        pending.remove(ready)
    return ordered
