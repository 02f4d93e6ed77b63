"""Error types that neml2 raises for user mistakes; the CLIs print them as one line."""

from __future__ import annotations

from pathlib import Path


class Neml2Error(Exception):
    """A mistake the user can fix (bad input file, bad option, missing artifact)."""


class InputError(Neml2Error):
    """A problem located in an input file; prints as ``file:line: message``."""

    def __init__(self, path: str | Path, line: int, message: str) -> None:
        self.path = str(path)
        self.line = line
        self.message = message
        super().__init__(f"{self.path}:{line}: {message}")


class HitError(InputError):
    """A HIT syntax or value error: what was found at ``file:line`` and what was expected."""
