"""Output paths: checked before any work is done, and written atomically (a device folder
is compiled beside its place and renamed into it; the stub goes through a temporary file)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import threading
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import torch

from .. import artifact
from ..cli import check_writable_folder
from ..errors import InputError, Neml2Error
from ..hit import Section


def check_model_name(section: Section) -> None:
    """Refuse a model name that is not one plain path component: the artifact folder
    ``OUT/<model>/`` must lie inside OUT."""
    name = section.name
    if name in ("", ".", "..") or any(c in name for c in "/\\\0"):
        raise InputError(
            section.path,
            section.line,
            f"[Models/{name}]: the model name '{name}' cannot name the artifact folder "
            "OUT/<model>/; rename the block to a plain name (not '.' or '..', no '/' or '\\')",
        )


def check_targets(out: Path, model: str, source: Path, devices: Sequence[torch.device]) -> None:
    """Refuse, before any work, output paths that cannot be written: OUT (a file, or not
    writable), a file where a folder goes, and a stub that would overwrite ``source``."""
    check_writable_folder(out, "-o")
    for folder in (out / model, *(artifact.device_dir(out / model, d.type) for d in devices)):
        if folder.exists() and not folder.is_dir():
            raise Neml2Error(f"-o {out}: '{folder}' is a file, where the artifact needs a folder")
    stub = artifact.stub_path(out, model)
    if stub.is_dir():
        raise Neml2Error(f"-o {out}: the stub '{stub}' is a folder")
    if stub.exists() and source.exists() and os.path.samefile(stub, source):
        raise Neml2Error(
            f"-o {out}: the stub '{stub}' would overwrite the input file '{source}'; "
            "give another -o or rename the input file"
        )


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold a Ctrl-C (SIGINT) until the block is done, then raise KeyboardInterrupt."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise KeyboardInterrupt


@contextlib.contextmanager
def interrupts_blocked() -> Iterator[None]:
    """Block SIGINT in this thread, so that the worker processes started inside the block
    inherit the blocked signal: a Ctrl-C reaches only the parent, which ends them."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def build_folder(folder: Path) -> Path:
    """A fresh hidden folder beside ``folder`` to compile into (``.<device>.partial-*``)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{folder.name}.partial-", dir=folder.parent))


def install_folder(build: Path, folder: Path) -> None:
    """Put the complete ``build`` folder in the place of ``folder``; only now is the old
    folder (if any) moved aside, and then removed."""
    old = None
    with interrupts_deferred():
        if folder.exists() or folder.is_symlink():
            old = folder.with_name(f".{folder.name}.old-{uuid.uuid4().hex[:8]}")
            os.replace(folder, old)
        os.replace(build, folder)
    if old is not None:
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink(missing_ok=True)


def write_stub(stub: Path, text: str) -> None:
    """Write the stub through a temporary file and a rename: never half written."""
    stub.parent.mkdir(parents=True, exist_ok=True)
    temporary = stub.with_name(f".{stub.name}.partial-{uuid.uuid4().hex[:8]}")
    try:
        temporary.write_text(text)
        os.replace(temporary, stub)
    finally:
        temporary.unlink(missing_ok=True)


def missing_folders(folder: Path) -> list[Path]:
    """``folder`` and its ancestors that do not exist yet, deepest first."""
    missing: list[Path] = []
    while not folder.exists() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    return missing
