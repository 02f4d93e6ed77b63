"""Shared fixtures: paths, a subprocess runner for the CLIs, and the one compiled artifact."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

PYTHON_DIR = Path(__file__).resolve().parents[1]
REPO = PYTHON_DIR.parent
FIXTURES = REPO / "tests" / "aoti"

Runner = Callable[..., subprocess.CompletedProcess[str]]


def run_module(
    module: str, *args: str | Path, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m <module> args...`` with only this package on PYTHONPATH, as ctest runs it."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PYTHON_DIR), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", module, *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=False,
    )


def prebuilt_fixture(name: str) -> tuple[Path, str] | None:
    """The artifacts ctest's aoti_compile_<name> made (NEML2_TEST_ARTIFACTS, set by ctest)
    and that compile's output, when they are what compile_fixture would make: the flags of
    the fixture's flags.txt, a cpu folder only, compiled into an empty folder. The tests
    only read them."""
    folder = os.environ.get("NEML2_TEST_ARTIFACTS")
    if not folder:
        return None
    out, log = Path(folder) / name, Path(folder) / f"{name}.log"
    if not (out / "model_aoti.i").is_file() or not log.is_file():
        return None
    if [p.name for p in (out / "model").iterdir()] != ["cpu"]:
        return None
    stdout = log.read_text()
    if not stdout.split("\n", 1)[0].endswith("; not compiled before"):
        return None  # a recompile prints other lines; test_aoti checks a first compile's
    return out, stdout


def fixture_flags(name: str) -> list[str]:
    """The neml2-compile flags of tests/aoti/<name> (its flags.txt, as compile_fixture.sh
    reads it: the first line; ``-d :`` without one)."""
    flags = FIXTURES / name / "flags.txt"
    return flags.read_text().splitlines()[0].split() if flags.is_file() else ["-d", ":"]


def compile_fixture(factory: pytest.TempPathFactory, name: str) -> tuple[Path, str]:
    """tests/aoti/<name>/model.i compiled for cpu with its flags.txt, and the compile's
    output: ctest's artifacts where it made them (prebuilt_fixture), else a fresh compile."""
    prebuilt = prebuilt_fixture(name)
    if prebuilt is not None:
        return prebuilt
    out = factory.mktemp(f"aoti-{name}")
    source = FIXTURES / name / "model.i"
    flags = fixture_flags(name)
    result = run_module("neml2.compile", source, "--model", "model", *flags, "-o", out)
    assert result.returncode == 0, result.stderr
    return out, result.stdout


def require_loadable(stub: Path) -> None:
    """Load a compiled stub in a child first, so that a crash fails one test, not the run."""
    result = run_module("neml2.run", stub, "--model", "model", "--batch", "1")
    assert result.returncode == 0, (
        f"loading {stub} from Python failed (exit status {result.returncode}, "
        f"torch {torch.__version__}): {result.stderr}"
    )


@pytest.fixture(scope="session")
def compiled_elastic(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """tests/aoti/elastic_promoted compiled for cpu (-d : -p : --into forward), once."""
    return compile_fixture(tmp_path_factory, "elastic_promoted")


@pytest.fixture(scope="session")
def compiled_viscoplastic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/aoti/viscoplastic compiled (-d : -p :), once a child process has loaded it."""
    out, _ = compile_fixture(tmp_path_factory, "viscoplastic")
    require_loadable(out / "model_aoti.i")
    return out


@pytest.fixture(scope="session")
def compiled_thermoelastic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/aoti/thermoelastic compiled with its flags.txt (-d : -p :, --into forward and
    renames), once a child process has loaded it."""
    out, _ = compile_fixture(tmp_path_factory, "thermoelastic")
    require_loadable(out / "model_aoti.i")
    return out


@pytest.fixture(scope="session")
def loadable_elastic(compiled_elastic: tuple[Path, str]) -> tuple[Path, str]:
    """compiled_elastic, once a separate process has loaded it without crashing.

    torch 2.11.0+cu130 killed any Python process that loaded a package until
    neml2.runtime put libstdc++ first (doc/python.md); a regression there would take the
    whole pytest run down, so it is probed in a child first.
    """
    require_loadable(compiled_elastic[0] / "model_aoti.i")
    return compiled_elastic
