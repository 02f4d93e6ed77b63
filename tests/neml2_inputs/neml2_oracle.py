"""Evaluate input files with NEML2 3.1.0 (PyPI), the reference the corpus is checked against.

Run by python/tests/test_neml2_oracle.py with the Python of a separate environment that
has NEML2 (PyPI's package is also called ``neml2``, so it cannot share one with this
project): ``python neml2_oracle.py REQUEST.pt RESULT.pt``. REQUEST holds
``{"file", "model", "batch", "steps": [{input name: (batch, ...) tensor}, ...]}``; RESULT gets
``{"version", "steps": [{"outputs": {...}, "jacobian": {of: {wrt: tensor}}}, ...]}``
with NEML2's eager outputs and Jacobian blocks, ``(B, *of, *wrt)``; with
``"jvp_columns": True`` dense blocks ``(B, of size, wrt size)`` from NEML2's ``jvp``, one
column per component of each input (RESULT's step then has ``"dense": True``); with
``"outputs_only": True`` the outputs alone (for a model whose Jacobian NEML2 cannot
build, which can take NEML2 long to find out). A REQUEST of the form
``{"cases": [request, ...]}`` answers several files in one process: RESULT then holds
``{"version", "cases": [{"steps": ...} or {"error": message}, ...]}``, an error being
what NEML2 raised for that case. A REQUEST ``{"unit_tests": [path, ...]}`` runs the value
checks of NEML2's own ModelUnitTest driver on each test-style file: RESULT then holds
``{"version", "unit_tests": [{"values": number of outputs checked} or {"error": message}]}``.
"""

from __future__ import annotations

import sys

import neml2
import torch


def plain(value: object) -> torch.Tensor:
    """A NEML2 typed tensor as a plain tensor."""
    data = getattr(value, "data", value)
    assert isinstance(data, torch.Tensor)
    return data.detach().clone()


#: NEML2 3.1.0's extension, built for another torch, now and then misreads a tensor's
#: layout in its eager Newton solve and raises one of these; the same call then succeeds.
LAYOUT_FAULTS = (
    "doesn't support converting to a different layout",
    "layout_impl is only implemented for TensorImpl subclasses",
)
ATTEMPTS = 20


def jacobian(model: list, request: dict, inputs: dict, b: int) -> tuple[dict, dict]:
    """NEML2's outputs and Jacobian at point ``b``, repeating a call that hit the layout
    fault with a freshly loaded model (``model``: a one-element list, the model replaced
    in place), since a model that hit it may keep hitting it."""
    for attempt in range(ATTEMPTS):
        try:
            return model[0].jacobian(point(model[0], request, inputs, b))
        except RuntimeError as err:
            if attempt + 1 == ATTEMPTS or not any(f in str(err) for f in LAYOUT_FAULTS):
                raise
            model[0] = neml2.load_model(request["file"], request["model"])
    raise AssertionError("unreachable")


def values(model: list, request: dict, inputs: dict, b: int) -> dict:
    """NEML2's outputs at point ``b``, repeating a call that hit the layout fault with a
    freshly loaded model (``model``: a one-element list, the model replaced in place),
    since a model that hit it may keep hitting it."""
    for attempt in range(ATTEMPTS):
        try:
            return model[0].call_by_name(point(model[0], request, inputs, b))
        except RuntimeError as err:
            if attempt + 1 == ATTEMPTS or not any(f in str(err) for f in LAYOUT_FAULTS):
                raise
            model[0] = neml2.load_model(request["file"], request["model"])
    raise AssertionError("unreachable")


def point(model: object, request: dict, inputs: dict, b: int) -> dict:
    """The inputs of point ``b``; those with sub-batch axes (``request["sub_batch_ndim"]``)
    as NEML2's typed tensors that say how many leading axes are sub-batch axes."""
    ndim = request.get("sub_batch_ndim", {})
    spec = model.input_spec  # type: ignore[attr-defined]
    return {
        k: spec[k](v[b], sub_batch_ndim=ndim[k]) if ndim.get(k) else v[b]
        for k, v in inputs.items()
    }


def values_only(model: object, request: dict, err: Exception | None) -> list[dict]:
    """NEML2's outputs alone, for a model whose Jacobian NEML2 itself fails to build
    (``err``, reported with them) or whose request asks for the outputs only."""
    steps = []
    held = [model]
    for inputs in request["steps"]:
        points = [values(held, request, inputs, b) for b in range(request["batch"])]
        outputs = {k: torch.stack([plain(p[k]) for p in points]) for k in points[0]}
        step: dict = {"outputs": outputs}
        if err is not None:
            step["jacobian_error"] = f"{type(err).__name__}: {err}"
        steps.append(step)
    return steps


def answer(request: dict) -> list[dict]:
    """NEML2's outputs and Jacobians for every step of one request (the outputs alone,
    with the Jacobian's error, where NEML2 computes values but fails on the Jacobian)."""
    model = neml2.load_model(request["file"], request["model"])
    if request.get("outputs_only"):
        return values_only(model, request, None)
    try:
        if request.get("jvp_columns"):
            return jvp_columns(model, request)
        return jacobians(model, request)
    except Exception as err:
        if any(f in str(err) for f in LAYOUT_FAULTS):
            raise
        return values_only(model, request, err)


def jacobians(model: object, request: dict) -> list[dict]:
    """NEML2's outputs and Jacobians for every step of one request."""
    steps = []
    held = [model]
    for inputs in request["steps"]:
        # point by point: NEML2 3.1.0's eager Newton solve refuses a batch dimension
        # (IndexError in newton_solve_eager), and a point's result is the same either way
        points = []
        for b in range(request["batch"]):
            points.append(jacobian(held, request, inputs, b))
        outputs, jac = points[0]
        steps.append(
            {
                "outputs": {
                    k: torch.stack([plain(p[0][k]) for p in points]) for k in outputs
                },
                "jacobian": {
                    o: {
                        i: torch.stack([plain(p[1][o][i]) for p in points]) for i in row
                    }
                    for o, row in jac.items()
                },
                "inputs": list(held[0].input_spec),
            }
        )
    return steps


def jvp_columns(model: object, request: dict) -> list[dict]:
    """NEML2's outputs and dense Jacobian blocks ``(B, of size, wrt size)`` built column
    by column from its forward-mode ``jvp``, one unit tangent per component of each
    input's per-point shape (sub-batch axes included), for models whose ``jacobian``
    seeds one direction per base component only (a stencil along a sub-batch axis)."""
    ndim = request.get("sub_batch_ndim", {})
    steps = []
    for inputs in request["steps"]:
        outputs: list[dict] = []
        blocks: list[dict] = []
        for b in range(request["batch"]):
            x = point(model, request, inputs, b)
            spec = model.input_spec  # type: ignore[attr-defined]
            columns: dict = {}
            for name, value in inputs.items():
                for j in range(value[b].numel()):
                    unit = torch.zeros_like(value[b])
                    unit.view(-1)[j] = 1.0
                    tangent = (
                        spec[name](unit, sub_batch_ndim=ndim[name])
                        if ndim.get(name)
                        else unit
                    )
                    out, jvp = model.jvp(x, {name: tangent})  # type: ignore[attr-defined]
                    for o, t in jvp.items():
                        columns.setdefault(o, {}).setdefault(name, []).append(
                            plain(t).reshape(-1)
                        )
            outputs.append({k: plain(v) for k, v in out.items()})
            blocks.append(
                {
                    o: {i: torch.stack(c, dim=-1) for i, c in row.items()}
                    for o, row in columns.items()
                }
            )
        steps.append(
            {
                "outputs": {
                    k: torch.stack([p[k] for p in outputs]) for k in outputs[0]
                },
                "jacobian": {
                    o: {i: torch.stack([p[o][i] for p in blocks]) for i in row}
                    for o, row in blocks[0].items()
                },
                "dense": True,
            }
        )
    return steps


def unit_test(path: str) -> dict:
    """NEML2's ModelUnitTest driver of one file, its value checks (its derivative checks
    are NEML2's own consistency checks, not the file's values)."""
    from neml2.drivers.ModelUnitTest import ModelUnitTest

    try:
        return {
            "values": ModelUnitTest.from_file(path).run(check_dvalue=False).value_checks
        }
    except Exception as err:  # noqa: BLE001 (reported per file, compared by the test)
        return {"error": f"{type(err).__name__}: {err}"}


def main(request_path: str, result_path: str) -> None:
    request = torch.load(request_path)
    version = getattr(neml2, "__version__", "unknown")
    result: dict = {"version": str(version), "torch": str(torch.__version__)}
    if "unit_tests" in request:
        result["unit_tests"] = [unit_test(path) for path in request["unit_tests"]]
    elif "cases" in request:
        cases = []
        for case in request["cases"]:
            try:
                cases.append({"steps": answer(case)})
            except Exception as err:  # noqa: BLE001 (reported per case, compared by the test)
                cases.append({"error": f"{type(err).__name__}: {err}"})
        result["cases"] = cases
    else:
        result["steps"] = answer(request)
    torch.save(result, result_path)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
