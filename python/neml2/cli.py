"""What the command-line tools share: user errors become one line on stderr and exit status 2."""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import torch

from . import hit
from .errors import InputError, Neml2Error

USER_ERROR = 2


class OneLineParser(argparse.ArgumentParser):
    """An argument parser for the neml2 CLIs: no abbreviated options (``--mod`` is not
    ``--model``), ``--version``, and a mistake printed as one line (``prog: error: ...``,
    exit status 2) instead of the usage and the line."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)
        from . import __version__

        self.add_argument(
            "--version",
            action="version",
            version=f"%(prog)s {__version__}",
            help="print the neml2 version and exit",
        )

    def error(self, message: str) -> NoReturn:
        """Print ``prog: error: message`` (one line, pointing at --help) and exit with 2."""
        self.exit(USER_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def finite_float(text: str) -> float:
    """An argparse type: a finite number (``nan`` and ``inf`` are refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got '{text}'") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got '{text}'")
    return value


def check_writable_folder(path: Path, option: str) -> None:
    """Refuse an output folder that is a file, lies under a file, or cannot be written
    (the nearest existing folder of ``path`` must be writable)."""
    probe = path
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    if probe == path and not path.is_dir():
        raise Neml2Error(f"{option} {path}: exists and is not a folder")
    if not probe.is_dir():
        raise Neml2Error(f"{option} {path}: '{probe}' is a file, not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise Neml2Error(f"{option} {path}: '{probe}' is not writable")


def check_output_file(path: Path, option: str) -> None:
    """Refuse an output file that is a folder or whose folder is missing or not writable."""
    if path.is_dir():
        raise Neml2Error(f"{option} {path}: is a folder; give a file name")
    folder = path.parent
    if not folder.is_dir():
        raise Neml2Error(f"{option} {path}: no such folder '{folder}'")
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise Neml2Error(f"{option} {path}: not writable")


def only_model(path: str, option: str = "--model") -> str:
    """The name of the one block of ``path``'s ``[Models]``; an error naming the blocks
    when there are several (or none)."""
    root = hit.load(path)
    models = root.child("Models")
    names = list(models.children) if models is not None else []
    if len(names) == 1:
        return names[0]
    listed = ", ".join(names) or "none"
    raise Neml2Error(
        f"{path} defines {len(names)} models ({listed}): choose one with {option} NAME"
        if names
        else f"{path} defines no model in [Models]"
    )


def run_main(prog: str, body: Callable[[], int]) -> int:
    """Run ``body``; a user error prints as one line (``file:line: ...`` for input files)."""
    try:
        return body()
    except InputError as err:
        print(err, file=sys.stderr)
    except Neml2Error as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    return USER_ERROR


def parse_device(spec: str) -> torch.device:
    """A ``--device`` value: cpu, cuda or cuda:N, checked to exist here."""
    try:
        device = torch.device(spec)
    except RuntimeError:
        device = None
    if device is None or device.type not in ("cpu", "cuda"):
        raise Neml2Error(f"--device {spec}: expected cpu, cuda or cuda:N")
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise Neml2Error(
                f"--device {spec}: no CUDA device is visible (torch.cuda.is_available() is False)"
            )
        count = torch.cuda.device_count()
        if device.index is not None and device.index >= count:
            raise Neml2Error(f"--device {spec}: only {count} CUDA device(s) are visible")
    return device
