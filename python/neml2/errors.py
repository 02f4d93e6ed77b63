"""Error types that neml2 raises for user mistakes; the CLIs print them as one line."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


class Neml2Error(Exception):
    """A mistake the user can fix (bad input file, bad option, missing artifact)."""

    #: Whether the caller may retry with other inputs (as the C++ ``Exception::recoverable``).
    recoverable = False


class InputError(Neml2Error):
    """A problem located in an input file; prints as ``file:line: message``."""

    def __init__(self, path: str | Path, line: int, message: str) -> None:
        self.path = str(path)
        self.line = line
        self.message = message
        super().__init__(f"{self.path}:{line}: {message}")


class HitError(InputError):
    """A HIT syntax or value error: what was found at ``file:line`` and what was expected."""


class ArtifactError(Neml2Error):
    """A compiled artifact that is damaged or does not match its model_meta.json.

    Raised while loading or checking an artifact, before any graph runs on the caller's
    inputs; the cure is to compile the model again.
    """


class ConvergenceError(Neml2Error):
    """An implicit model's solve failed at some points; retrying with a smaller step may succeed.

    The message has the C++ runtime's wording: how many points failed out of how many,
    and the worst final residual. Where the status of the points is known, the error also
    names them, as the C++ ``FailedPoints`` does (every tensor on the CPU):

    - ``converged``: ``(B,)`` bool over the call's batch, true where the point converged;
    - ``rows``: ``(K,)`` int64, the failed points' rows, ascending;
    - ``residual``: ``(K,)``, their final residual norms.
    """

    recoverable = True

    def __init__(
        self,
        model: str,
        failed: int,
        total: int,
        worst: float,
        *,
        converged: torch.Tensor | None = None,
        residual: torch.Tensor | None = None,
    ) -> None:
        self.model = model
        self.failed = failed
        self.total = total
        self.worst = worst
        self.converged = converged
        self.rows = None if converged is None else converged.logical_not().nonzero().reshape(-1)
        self.residual = residual
        super().__init__(
            f"model '{model}': {failed} of {total} points did not converge "
            f"(worst residual {worst:.3e})"
        )
