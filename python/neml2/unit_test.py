"""NEML2's unit tests with this project's models: the ``ModelUnitTest`` driver of an input file.

A NEML2 unit test is an input file whose ``[Drivers]`` block holds a driver of
``type = ModelUnitTest``: the model to test (``model``), its inputs
(``input_<Type>_names`` and ``input_<Type>_values``, per NEML2 tensor type) and the
expected outputs (``output_<Type>_names`` / ``output_<Type>_values``). A value is a number
(a Scalar) or the name of a ``[Tensors]`` block; leading axes are batch axes, broadcast
against each other. :func:`run_unit_test` builds the model (with the file's ``[Settings]``),
evaluates it, and checks, as NEML2's driver does:

* ``check_values`` (true): each expected output, ``|out - expected| <= value_abs_tol +
  value_rel_tol |expected|`` (defaults 1e-8 and 1e-5);
* ``check_derivatives`` (true): the Jacobian against central differences of the outputs
  along each input component (``derivative_rel_tol`` / ``derivative_abs_tol``, 1e-5 / 1e-8);
* ``check_AD_parameter_derivatives`` (true): the parameter Jacobian against central
  differences along each parameter component (``parameter_derivative_rel_tol`` /
  ``parameter_derivative_abs_tol``, 1e-5 / 1e-8).

``check_second_derivatives`` (false) and its tolerances are read, but the models here
have no second derivatives: a driver that asks for them reports that check as skipped.
An input the driver does not give is zero, as in NEML2's C++ driver. Any other option is
an error. ``neml2-run FILE --unit-test [DRIVER]`` runs one from the command line.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import torch

from . import hit
from .errors import HitError, Neml2Error
from .hit import _NUMBER, Section
from .models import Model
from .models.sub_batch import build_with_settings
from .tensor_blocks import resolve_typed
from .tensors import TYPES

__all__ = ["Check", "UnitTestReport", "find_driver", "run_unit_test"]

DRIVER_TYPE = "ModelUnitTest"
#: Boolean options and their defaults.
FLAGS = {
    "check_values": True,
    "check_derivatives": True,
    "check_second_derivatives": False,
    "check_AD_parameter_derivatives": True,
    "verbose": False,
}
#: Tolerance options and their defaults (NEML2's).
TOLERANCES = {
    "value_rel_tol": 1e-5,
    "value_abs_tol": 1e-8,
    "derivative_rel_tol": 1e-5,
    "derivative_abs_tol": 1e-8,
    "second_derivative_rel_tol": 1e-5,
    "second_derivative_abs_tol": 1e-8,
    "parameter_derivative_rel_tol": 1e-5,
    "parameter_derivative_abs_tol": 1e-8,
}
#: The tensor types a driver's input and output options may name.
VALUE_TYPES = tuple(t for t in TYPES if t not in ("Rot", "Quaternion"))
OPTIONS = frozenset(
    {"type", "model", *FLAGS, *TOLERANCES}
    | {
        f"{io}_{t}_{what}"
        for io in ("input", "output")
        for t in VALUE_TYPES
        for what in ("names", "values")
    }
)
#: Relative step of the central differences (and the smallest absolute step).
STEP = 1e-6


@dataclass
class Check:
    """One comparison the driver asked for: ``ok`` None means skipped (see ``detail``)."""

    name: str
    ok: bool | None
    detail: str = ""


@dataclass
class UnitTestReport:
    """What :func:`run_unit_test` found: every check, in order."""

    driver: str
    model: str
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no check failed (skipped ones do not fail)."""
        return all(c.ok is not False for c in self.checks)

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if c.ok is False]


def find_driver(root: Section, name: str | None = None) -> Section:
    """The ``[Drivers]`` block of type ModelUnitTest named ``name``, or the only one."""
    drivers = root.child("Drivers")
    found = [
        d
        for d in (drivers.children.values() if drivers is not None else ())
        if d.string("type", "") == DRIVER_TYPE
    ]
    if name is not None:
        block = drivers.child(name) if drivers is not None else None
        if block is None or block not in found:
            listed = ", ".join(d.name for d in found) or "none"
            raise HitError(
                root.path, 1, f"no [Drivers/{name}] of type {DRIVER_TYPE}; such drivers: {listed}"
            )
        return block
    if len(found) != 1:
        where = drivers.line if drivers is not None else 1
        listed = ", ".join(d.name for d in found)
        raise HitError(
            root.path,
            where,
            f"expected one [Drivers] block of type {DRIVER_TYPE}, found {len(found)}"
            + (f" ({listed}); name one" if found else ""),
        )
    return found[0]


def run_unit_test(path: str | Path, driver: str | None = None) -> UnitTestReport:
    """Run the ModelUnitTest driver ``driver`` (or the file's only one) of the input file
    ``path`` with this project's models; see the module docstring."""
    root = hit.load(path)
    block = find_driver(root, driver)
    for key in block.params:
        if key not in OPTIONS:
            raise block.error(
                key,
                f"[{block.full_name}]: unknown option '{key}' for {DRIVER_TYPE}; expected "
                "model, check_*, *_rel_tol, *_abs_tol, input_<Type>_names/values or "
                f"output_<Type>_names/values (<Type> one of {', '.join(VALUE_TYPES)})",
            )
    flags = {k: block.boolean(k, v) for k, v in FLAGS.items()}
    tol = {k: block.number(k, v) for k, v in TOLERANCES.items()}
    model = build_with_settings(root, block.string("model"))
    given = _values(block, "input")
    expected = _values(block, "output")
    _check_names(block, model, given, expected)
    x, batch = _batched_inputs(model, given)
    report = UnitTestReport(block.name, model.name)
    outputs = model.forward(x)
    if flags["check_values"]:
        for name, (key, want) in expected.items():
            have = outputs[name].reshape((*batch, *model.variable(name).shape))
            report.checks.append(
                _compare(
                    f"value of '{name}'",
                    have,
                    want,
                    tol["value_rel_tol"],
                    tol["value_abs_tol"],
                    key,
                )
            )
    if flags["check_derivatives"]:
        report.checks.extend(_input_derivatives(model, x, tol))
    if flags["check_second_derivatives"]:
        report.checks.append(
            Check(
                "second derivatives",
                None,
                "not available: the models here have first derivatives only",
            )
        )
    if flags["check_AD_parameter_derivatives"]:
        report.checks.extend(_parameter_derivatives(model, x, tol))
    return report


def _values(block: Section, io: str) -> dict[str, tuple[str, torch.Tensor]]:
    """``{variable: (option, tensor)}`` of the driver's ``<io>_<Type>_names/values``."""
    found: dict[str, tuple[str, torch.Tensor]] = {}
    for type_name in VALUE_TYPES:
        names_key, values_key = f"{io}_{type_name}_names", f"{io}_{type_name}_values"
        if names_key not in block.params and values_key not in block.params:
            continue
        names, values = block.strings(names_key, []), block.strings(values_key, [])
        if len(names) != len(values):
            raise block.error(
                values_key,
                f"parameter '{values_key}': {len(values)} values for {len(names)} names in "
                f"'{names_key}'",
            )
        for name, word in zip(names, values, strict=True):
            if name in found:
                raise block.error(names_key, f"parameter '{names_key}': '{name}' is given twice")
            if _NUMBER.fullmatch(word):
                if type_name != "Scalar":
                    raise block.error(
                        values_key,
                        f"parameter '{values_key}': a number ('{word}') is a Scalar; name a "
                        f"[Tensors] block for a {type_name}",
                    )
                tensor = torch.tensor(block.finite(values_key, word), dtype=Model.dtype)
            else:
                tensor = resolve_typed(block, values_key, word, type_name).data
            found[name] = (values_key, tensor)
    return found


def _check_names(
    block: Section,
    model: Model,
    given: Mapping[str, tuple[str, torch.Tensor]],
    expected: Mapping[str, tuple[str, torch.Tensor]],
) -> None:
    for role, values, variables in (
        ("input", given, model.inputs),
        ("output", expected, model.outputs),
    ):
        names = {v.name: v for v in variables}
        for name, (key, tensor) in values.items():
            if name not in names:
                raise block.error(
                    key.replace("_values", "_names"),
                    f"[{block.full_name}]: '{name}' is not an {role} of model '{model.name}'; "
                    f"its {role}s: {', '.join(names) or 'none'}",
                )
            shape = names[name].shape
            if tuple(tensor.shape[tensor.dim() - len(shape) :]) != shape or tensor.dim() < len(
                shape
            ):
                raise block.error(
                    key,
                    f"parameter '{key}': '{name}' has shape {tuple(tensor.shape)}, expected "
                    f"(..., {', '.join(map(str, shape))}) ({role} shape {shape})",
                )


def _batched_inputs(
    model: Model, given: Mapping[str, tuple[str, torch.Tensor]]
) -> tuple[dict[str, torch.Tensor], tuple[int, ...]]:
    """Every input broadcast to the common batch shape and flattened to ``(N, *shape)``."""
    batches = [t.shape[: t.dim() - len(model.variable(n).shape)] for n, (_, t) in given.items()]
    try:
        batch = tuple(torch.broadcast_shapes(*batches)) if batches else ()
    except RuntimeError:
        listed = ", ".join(f"'{n}' {tuple(b)}" for n, b in zip(given, batches, strict=True))
        raise Neml2Error(
            f"the driver's inputs have batch shapes that do not broadcast: {listed}"
        ) from None
    count = math.prod(batch)
    x = {}
    for v in model.inputs:
        if v.name in given:
            value = given[v.name][1].expand((*batch, *v.shape))
        else:  # as NEML2's driver does, an input not given is zero
            value = torch.zeros((*batch, *v.shape), dtype=Model.dtype)
        x[v.name] = value.reshape((count, *v.shape)).clone()
    return x, batch


def _compare(
    name: str, have: torch.Tensor, want: torch.Tensor, rtol: float, atol: float, key: str = ""
) -> Check:
    try:
        have, want = torch.broadcast_tensors(have, want.to(have.device))
    except RuntimeError:
        return Check(name, False, f"shape {tuple(have.shape)} does not match {tuple(want.shape)}")
    error = (have - want).abs()
    bound = atol + rtol * want.abs()
    if bool((error <= bound).all()):
        return Check(name, True)
    worst = int(torch.argmax(error - bound))
    detail = (
        f"{int((error > bound).sum())} of {error.numel()} entries differ; largest excess at "
        f"entry {worst}: got {have.reshape(-1)[worst].item():.10g}, expected "
        f"{want.reshape(-1)[worst].item():.10g}" + (f" ({key})" if key else "")
    )
    return Check(name, False, detail)


def _step(values: torch.Tensor) -> torch.Tensor:
    return torch.clamp(STEP * values.abs(), min=STEP)


def _input_derivatives(
    model: Model, x: dict[str, torch.Tensor], tol: Mapping[str, float]
) -> list[Check]:
    jac = model.jacobian(x)
    n = next(iter(x.values())).shape[0] if x else 1
    checks = []
    for wrt in model.inputs:
        flat = x[wrt.name].reshape(n, -1)
        columns: dict[str, list[torch.Tensor]] = {}
        for j in range(flat.shape[1]):
            h = _step(flat[:, j])
            moved = []
            for sign in (1.0, -1.0):
                shifted = flat.clone()
                shifted[:, j] += sign * h
                moved.append(model.forward({**x, wrt.name: shifted.reshape(x[wrt.name].shape)}))
            for of in model.outputs:
                diff = (moved[0][of.name] - moved[1][of.name]).reshape(n, -1) / (
                    2 * h.unsqueeze(-1)
                )
                columns.setdefault(of.name, []).append(diff)
        for of in model.outputs:
            fd = torch.stack(columns[of.name], dim=-1).reshape((n, *of.shape, *wrt.shape))
            block = jac[of.name][wrt.name].expand((n, *of.shape, *wrt.shape))
            checks.append(
                _compare(
                    f"d{of.name}/d{wrt.name}",
                    block,
                    fd,
                    tol["derivative_rel_tol"],
                    tol["derivative_abs_tol"],
                )
            )
    return checks


def _parameter_derivatives(
    model: Model, x: dict[str, torch.Tensor], tol: Mapping[str, float]
) -> list[Check]:
    pjac = model.param_jacobian(x)
    checks = []
    for name, value in model.parameters.items():
        saved = value.clone()
        columns: dict[str, list[torch.Tensor]] = {}
        try:
            for j in range(saved.numel()):
                h = float(_step(saved.reshape(-1)[j]))
                moved = []
                for sign in (1.0, -1.0):
                    shifted = saved.clone()
                    shifted.view(-1)[j] += sign * h
                    value.copy_(shifted)
                    moved.append(model.forward(x))
                for out, plus in moved[0].items():
                    columns.setdefault(out, []).append((plus - moved[1][out]) / (2 * h))
        finally:
            value.copy_(saved)
        for of in model.outputs:
            fd = torch.stack(columns[of.name], dim=-1)
            fd = fd.reshape((*fd.shape[:-1], *saved.shape))
            block = pjac[of.name][name].expand(fd.shape)
            checks.append(
                _compare(
                    f"d{of.name}/d{name}",
                    block,
                    fd,
                    tol["parameter_derivative_rel_tol"],
                    tol["parameter_derivative_abs_tol"],
                )
            )
    return checks
