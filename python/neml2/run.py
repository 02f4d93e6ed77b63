"""neml2-run: evaluate a model's forward on random or given inputs and summarize the result,
or run the ModelUnitTest driver of a NEML2 test-style input file (``--unit-test``)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import torch

from .cli import OneLineParser, check_output_file, finite_float, only_model, parse_device, run_main
from .errors import Neml2Error
from .models import Model
from .shim import CompiledModel, load_model
from .unit_test import run_unit_test

DEFAULT_BATCH = 16
#: Random inputs are uniform in [0, scale): strain-sized by default, so that models with a
#: yield stress or a Newton solve see the values a material point sees.
DEFAULT_SCALE = 1e-3


def read_inputs(path: str, device: torch.device) -> dict[str, torch.Tensor]:
    """A ``{name: tensor}`` dict saved with ``torch.save``."""
    try:
        data = torch.load(path, map_location=device, weights_only=True)
    except FileNotFoundError:
        raise Neml2Error(f"--input {path}: no such file") from None
    except Exception as err:
        raise Neml2Error(f"--input {path}: not a torch.save file of tensors ({err})") from None
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in data.items()
    ):
        raise Neml2Error(f"--input {path}: expected a dict of name -> tensor")
    return data


def random_inputs(
    model: Model | CompiledModel, batch: int, device: torch.device, scale: float = DEFAULT_SCALE
) -> dict[str, torch.Tensor]:
    return {
        v.name: scale * torch.rand((batch, *v.shape), dtype=model.dtype, device=device)
        for v in model.inputs
    }


def describe(role: str, name: str, tensor: torch.Tensor) -> str:
    shape = "x".join(str(n) for n in tensor.shape) or "scalar"
    if tensor.numel() == 0:
        return f"  {role:<6} {name:<16} {shape:<12} (empty)"
    low, high = tensor.min().item(), tensor.max().item()
    return f"  {role:<6} {name:<16} {shape:<12} min {low:<12.6g} max {high:.6g}"


def make_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="neml2-run", description="Evaluate a model's forward once and summarize it."
    )
    parser.add_argument("file", metavar="FILE", help="model .i or compiled stub (*_aoti.i)")
    parser.add_argument(
        "--model",
        help="name of the model block in [Models] (default: the file's only model)",
    )
    parser.add_argument(
        "--unit-test",
        nargs="?",
        const="",
        metavar="DRIVER",
        help="run the file's ModelUnitTest driver (the one named DRIVER, or the only one) "
        "and check the model against it; exit status 1 when a check fails",
    )
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default: cpu)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--batch", type=int, help=f"random inputs of this batch size (default: {DEFAULT_BATCH})"
    )
    source.add_argument("--input", help="inputs saved with torch.save as {name: tensor}")
    parser.add_argument(
        "--scale",
        type=finite_float,
        default=DEFAULT_SCALE,
        help=f"random inputs are uniform in [0, SCALE) (default: {DEFAULT_SCALE:g})",
    )
    parser.add_argument(
        "-o", "--output", help="save the outputs to this file with torch.save (checked first)"
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="time this many calls and report the mean"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = make_parser().parse_args(argv)

    def body() -> int:
        if args.unit_test is not None:
            return unit_test(args)
        if args.batch is not None and args.batch < 0:
            raise Neml2Error(f"--batch {args.batch}: expected a batch size >= 0")
        if args.repeat < 1:
            raise Neml2Error(f"--repeat {args.repeat}: expected at least 1")
        if args.output is not None:
            check_output_file(Path(args.output), "--output")
        device = parse_device(args.device)
        torch.set_default_device(device)
        name = args.model if args.model is not None else only_model(args.file)
        model = load_model(args.file, name)
        if args.input is not None:
            inputs = read_inputs(args.input, device)
        else:
            batch = DEFAULT_BATCH if args.batch is None else args.batch
            inputs = random_inputs(model, batch, device, args.scale)

        outputs = model.forward(inputs)
        start = time.perf_counter()
        for _ in range(args.repeat):
            outputs = model.forward(inputs)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        elapsed = (time.perf_counter() - start) / args.repeat

        kind = "compiled" if isinstance(model, CompiledModel) else "eager"
        print(f"model '{model.name}' ({model.type_name}, {kind}) on {device}")
        for v in model.inputs:
            print(describe("input", v.name, inputs[v.name]))
        for name, tensor in outputs.items():
            print(describe("output", name, tensor))
        print(f"forward: {elapsed * 1e3:.3f} ms per call (mean of {args.repeat}, after a warm-up)")
        if args.output is not None:
            try:
                torch.save({k: v.cpu() for k, v in outputs.items()}, args.output)
            except OSError as err:
                raise Neml2Error(f"--output {args.output}: {err.strerror}") from None
            print(f"outputs saved to {args.output}")
        return 0

    return run_main("neml2-run", body)


def unit_test(args: argparse.Namespace) -> int:
    """``--unit-test``: one line per check, then a summary; 0 when every check passes."""
    if args.model is not None or args.input is not None or args.batch is not None:
        raise Neml2Error(
            "--unit-test takes the model and its inputs from the driver: drop "
            "--model, --input and --batch"
        )
    torch.set_default_device(parse_device(args.device))
    report = run_unit_test(args.file, args.unit_test or None)
    print(f"{args.file}: [Drivers/{report.driver}] on model '{report.model}'")
    for check in report.checks:
        status = {True: "ok", False: "FAILED", None: "skipped"}[check.ok]
        print(f"  {status:<8} {check.name}" + (f": {check.detail}" if check.detail else ""))
    failed = len(report.failures)
    print(
        f"{len(report.checks) - failed} of {len(report.checks)} checks passed"
        if not failed
        else f"{failed} of {len(report.checks)} checks FAILED"
    )
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
