"""What the command-line tools share: user errors become one line on stderr and exit status 2."""

from __future__ import annotations

import sys
from collections.abc import Callable

import torch

from .errors import InputError, Neml2Error

USER_ERROR = 2


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
