"""The neml2-compile command line: its options, FILE taken back from the end of an option
of several values, and main."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import artifact, hit, renames
from ..cli import OneLineParser, only_model, run_main
from ..models import model_section
from .driver import compile_model
from .output import check_model_name, check_targets
from .request import Request, prepare
from .selection import parse_devices

DESCRIPTION = """\
Compile one model of an input file into AOTInductor packages that the neml2 C++
runtime (and neml2.load_model) loads: OUT/<model>_aoti.i, a stub to load, and
OUT/<model>/<device>/ with model_meta.json and one .pt2 per graph (forward always;
jvp and jacobian with -d; param_jacobian and param_vjp with -p; --graphs keeps some;
--per-point adds each one's per-point variant).

example:
  neml2-compile tests/aoti/forward_single/model.i --model model -d : -j 2 -o aoti

Each graph takes tens of seconds to minutes to compile. A device folder whose
input blocks, flags, dtype, torch and neml2 are unchanged since it was compiled
is skipped ("up to date, skipped"); --force compiles it anyway.
"""

EPILOG = """\
The artifact layout and model_meta.json are specified in doc/artifacts.md; the
input file syntax and the model types in doc/authoring.md and doc/models.md.
A mistake in the input or the options prints one line and exits with status 2.
"""


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{text}'")
    return value


#: Namespace attribute where :class:`Values` records each run of values, in order.
RUNS = "_value_runs"


class Values(argparse.Action):
    """``nargs='+'``, storing the run of values (or, with ``extend``, appending it), and
    recording each run so that :func:`parse_args` can take FILE back from the end of one."""

    def __init__(
        self, option_strings: Sequence[str], dest: str, extend: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(option_strings, dest, nargs="+", **kwargs)
        self.extend = extend

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        run = [str(v) for v in (values or [])]
        if getattr(namespace, RUNS, None) is None:
            setattr(namespace, RUNS, [])
        getattr(namespace, RUNS).append((self.dest, self.extend, run))
        before = list(getattr(namespace, self.dest) or []) if self.extend else []
        setattr(namespace, self.dest, before + run)


def looks_like_file(value: str) -> bool:
    return value.endswith(".i") or Path(value).is_file()


def make_parser() -> argparse.ArgumentParser:
    """The parser of :func:`parse_args`, which takes FILE back from an option of several values
    (--device, -d, -p, --graphs, --into, --per-point, --rename-*)."""
    parser = OneLineParser(
        prog="neml2-compile",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    file = parser.add_argument(
        "file",
        metavar="FILE",
        help="the model input file (.i); options may come before or after it",
    )
    parser.add_argument(
        "--model",
        metavar="NAME",
        help="the block of [Models] to compile (default: the file's only model; required "
        "when [Models] holds several)",
    )
    parser.add_argument(
        "--device",
        action=Values,
        default=["cpu"],
        metavar="DEVICE",
        help="device type(s) to compile for, one folder each: cpu, cuda (default: cpu)",
    )
    parser.add_argument(
        "-d",
        dest="pairs",
        action=Values,
        extend=True,
        default=[],
        metavar="PAIR",
        help="derivative pairs OUTPUT:INPUT to compile jvp and jacobian for; ':' for all, "
        "'stress:' for every input of stress (default: none, forward only)",
    )
    parser.add_argument(
        "-p",
        dest="params",
        action=Values,
        extend=True,
        default=[],
        metavar="NAME",
        help="parameters to promote to run-time inputs (E or model.E), which adds "
        "param_vjp (and param_jacobian with -d); ':' for all (default: none, every "
        "parameter baked into the graphs)",
    )
    parser.add_argument(
        "--graphs",
        action=Values,
        extend=True,
        default=[],
        metavar="GRAPH",
        help="compile only these of the graphs -d and -p make, forward always (e.g. "
        "'--graphs jacobian' for a Newton solve that needs no jvp; default: all of them)",
    )
    parser.add_argument(
        "--into",
        action=Values,
        extend=True,
        default=[],
        metavar="GRAPH",
        help="also compile, for the cpu, a variant of these graphs that stores its per-point "
        "results straight into buffers the caller gives (the C++ dispatcher then copies "
        "nothing; e.g. '--into forward jacobian'; default: none)",
    )
    parser.add_argument(
        "--per-point",
        dest="per_point",
        action=Values,
        extend=True,
        default=[],
        metavar="NAME",
        help="promoted parameters (each also given to -p; ':' for all) that a caller may "
        "give one value per point, (B, *shape): every graph also gets a per-point variant "
        "<graph>_per_point.pt2 (default: none, every parameter shared by all points)",
    )
    for boundary, flag in renames.FLAGS.items():
        what = {
            "inputs": "an input",
            "outputs": "an output",
            "parameters": "a promoted parameter (model.E or E)",
        }[boundary]
        parser.add_argument(
            flag,
            dest=f"rename_{boundary}",
            action=Values,
            extend=True,
            default=[],
            metavar="OLD:NEW",
            help=f"give {what} of the compiled model another name: results, derivative keys, "
            "named_parameters() and messages use NEW; -d and -p keep the input file's names "
            "(default: none)",
        )
    parser.add_argument(
        "--dtype",
        choices=list(artifact.DTYPES),
        default="float64",
        help="floating-point dtype of the parameters and of every tensor the graphs take "
        "and return; float32 needs every Newton rel_tol >= 1e-6 (default: float64)",
    )
    parser.add_argument(
        "-j",
        "--jobs",
        type=positive_int,
        default=1,
        metavar="N",
        help="compile up to N graphs at once, each in its own process; every process "
        "runs a C++ compiler, so N above the number of cores does not help (default: 1)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="compile even the device folders that are up to date (default: skip them)",
    )
    parser.add_argument(
        "-o",
        "--output",
        dest="out",
        default="aoti",
        metavar="OUT",
        help="output folder (default: ./aoti)",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="show torch's warnings and the full traceback of a failed compile (default: off)",
    )
    # The usage shows FILE as required, but argparse must not require it: the values of
    # --device, -d, -p, --graphs, --into, --per-point and --rename-* run up to the next
    # option, so '-d : model.i' takes model.i as a pair, and parse_args takes it back.
    parser.usage = parser.format_usage().removeprefix("usage: ").rstrip()
    file.nargs = "?"
    file.required = False
    return parser


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line, options before or after FILE.

    FILE given before the options, after them or between them is the lone positional.
    Given after an option of several values (``-d : model.i --model model``), it is the last
    of their values; it is taken back when it names an input file (ends in .i or exists)
    and leaves the option at least one value of its own.
    """
    parser = make_parser()
    args = parser.parse_args(argv)
    runs: list[tuple[str, bool, list[str]]] = vars(args).pop(RUNS, [])
    if args.file is not None:
        return args
    ends = [run for _, _, run in runs if len(run) > 1 and looks_like_file(run[-1])]
    if not ends:
        parser.error("the following arguments are required: FILE")
    if len(ends) > 1:
        parser.error(f"FILE given twice: '{ends[0][-1]}' and '{ends[1][-1]}'")
    args.file = ends[0].pop()
    values: dict[str, list[str]] = {}
    for dest, extend, run in runs:
        values[dest] = [*values.get(dest, []), *run] if extend else run
    for dest, value in values.items():
        setattr(args, dest, value)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)

    def body() -> int:
        root = hit.load(args.file)
        name = args.model if args.model is not None else only_model(args.file)
        check_model_name(model_section(root, name))
        devices = parse_devices(args.device)
        out = Path(args.out)
        check_targets(out, name, Path(args.file), devices)
        req = Request(
            file=args.file,
            model=name,
            pairs=tuple(args.pairs),
            params=tuple(args.params),
            graphs=tuple(args.graphs),
            into=tuple(args.into),
            per_point=tuple(args.per_point),
            rename_inputs=tuple(args.rename_inputs),
            rename_outputs=tuple(args.rename_outputs),
            rename_parameters=tuple(args.rename_parameters),
            dtype=args.dtype,
            verbose=args.verbose,
        )
        prep = prepare(req)
        compile_model(req, prep, devices, out, args.jobs, args.force)
        return 0

    return run_main("neml2-compile", body)
