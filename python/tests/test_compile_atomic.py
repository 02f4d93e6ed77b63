"""neml2-compile writes safely (issue 31, rows 5-8): each device folder is compiled beside
its target and renamed into place, so that a failure or Ctrl-C (also under -j) leaves the
previous artifact as it was; the stub never overwrites the input; a model name is a plain
path component; the output paths are checked before any work."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from neml2 import compile as nc
from neml2.compile import workers as compile_workers

from .conftest import FIXTURES, PYTHON_DIR, fixture_flags, require_loadable
from .test_compile_cli import ELASTIC

Calls = list[Path]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Calls:
    """Replace export + AOTInductor by writing a small file; record each path written."""
    calls: Calls = []

    def write(module: nc.Graph, device: torch.device, path: Path) -> None:
        calls.append(path)
        path.write_bytes(module.graph.encode() * 10)

    monkeypatch.setattr(compile_workers, "compile_graph", write)
    return calls


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (hidden ones too) and its bytes."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def compile_here(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    """neml2-compile in this process: exit status, stdout and stderr."""
    status = nc.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_a_failed_force_keeps_the_previous_folder(
    fake: Calls, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = (ELASTIC, "--model", "model", "-d", ":", "-o", tmp_path)
    assert compile_here(capsys, *argv)[0] == 0
    before = snapshot(tmp_path)

    def half_then_fail(module: nc.Graph, device: torch.device, path: Path) -> None:
        path.write_bytes(b"half")
        if module.graph == "jvp":
            raise RuntimeError("injected")

    monkeypatch.setattr(compile_workers, "compile_graph", half_then_fail)
    status, _, err = compile_here(capsys, *argv, "--force")
    assert status == 2
    assert err.startswith("neml2-compile: error: compiling jvp for cpu failed"), err
    assert snapshot(tmp_path) == before  # no partial folder left, the old one untouched


@pytest.mark.aoti
def test_ctrl_c_during_force_keeps_the_previous_artifact(
    loadable_elastic: tuple[Path, str],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Row 8: Ctrl-C after one graph and half of the next are written; the artifact and
    the stub are as before, and the artifact still loads and runs."""
    out = tmp_path / "copy"
    shutil.copytree(loadable_elastic[0], out)
    before = snapshot(out)
    calls: Calls = []

    def interrupted(module: nc.Graph, device: torch.device, path: Path) -> None:
        calls.append(path)
        path.write_bytes(b"half written")
        if len(calls) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(compile_workers, "compile_graph", interrupted)
    source = FIXTURES / "elastic_promoted" / "model.i"
    flags = fixture_flags("elastic_promoted")
    status, _, err = compile_here(capsys, source, "--model", "model", *flags, "--force", "-o", out)
    assert (status, err) == (130, "neml2-compile: interrupted\n")
    assert len(calls) == 2
    assert snapshot(out) == before
    require_loadable(out / "model_aoti.i")


#: Patched into the CLI and its spawned workers: forward writes half a file and its pid,
#: then, ignoring SIGTERM (as a stuck worker would not end on it either), sleeps FAKE_SLEEP
#: seconds; every other graph is written at once.
SITECUSTOMIZE = """\
import os, pathlib, signal, time
import torch._inductor

def fake(program, package_path, inductor_configs=None):
    path = pathlib.Path(package_path)
    if path.name == "forward.pt2":
        path.write_bytes(b"half")
        pathlib.Path(os.environ["FAKE_MARKER"]).write_text(str(os.getpid()))
        previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(float(os.environ["FAKE_SLEEP"]))
        signal.signal(signal.SIGTERM, previous)
    path.write_bytes(b"fake " + path.name.encode())

torch._inductor.aoti_compile_and_package = fake
"""


@contextlib.contextmanager
def ctrl_c_as_in_a_terminal() -> Iterator[None]:
    """Children started in the block get SIGINT as a terminal gives its foreground job:
    not ignored and not blocked, whatever this process has.

    A pytest started in the background by a shell without job control (``pytest ... &``
    in a script) ignores SIGINT, and a child inherits an ignored signal (exec keeps it
    ignored, while a caught one is reset to the default): such a neml2-compile would ignore
    the test's Ctrl-C, as it should, and the test would wait for it in vain.
    """
    ignored = (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    )
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


def start_compile(
    tmp_path: Path, out: Path, marker: Path, sleep: float, *extra: str
) -> subprocess.Popen[str]:
    """neml2-compile (forward and param_vjp) in a child with the compile faked."""
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(site), str(PYTHON_DIR), env.get("PYTHONPATH")])
    )
    env.update({"FAKE_MARKER": str(marker), "FAKE_SLEEP": str(sleep)})
    # -X faulthandler: a child that hangs can be made to print every thread's stack
    # (interrupt_and_wait)
    argv = [sys.executable, "-X", "faulthandler", "-m", "neml2.compile", str(ELASTIC)]
    argv += ["--model", "model"]
    with ctrl_c_as_in_a_terminal():
        return subprocess.Popen(
            [*argv, "-p", "E", "-o", str(out), *extra],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group, as a terminal's Ctrl-C reaches it
        )


def signal_state(pid: int) -> str:
    """The ignored, caught and pending signals of ``pid`` and the blocked ones of its main
    thread (hex masks, bit n-1 for signal n; SIGINT is 0x2), read from /proc where there is one."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return "unknown"
    keys = ("SigIgn", "SigCgt", "ShdPnd", "SigPnd", "SigBlk")
    return ", ".join(line.replace(":\t", " ") for line in lines if line.startswith(keys))


def interrupt_and_wait(proc: subprocess.Popen[str], seconds: float) -> tuple[str, str]:
    """Ctrl-C to the child's process group; its output once it exits. A child still running
    after ``seconds`` is aborted, which makes it print every thread's stack (faulthandler),
    and the test fails with that stack: where an interrupted compile hangs."""
    os.killpg(proc.pid, signal.SIGINT)
    try:
        return proc.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        state = signal_state(proc.pid)
        os.kill(proc.pid, signal.SIGABRT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # its workers, which hold its pipes open
        _, stderr = proc.communicate(timeout=60)
        pytest.fail(
            f"neml2-compile did not end {seconds} s after Ctrl-C; its signal masks ({state}) "
            f"and stacks:\n{stderr}"
        )


def test_ctrl_c_under_jobs_keeps_the_previous_artifact(tmp_path: Path) -> None:
    """Row 8 with -j 2: SIGINT to the whole process group (what a terminal's Ctrl-C does)
    while forward is half written in a worker that ignores SIGTERM: exit 130 with one line,
    the previous folder and stub unchanged, nothing partial left, and the worker ended
    (killed) and reaped."""
    out = tmp_path / "out"
    first = start_compile(tmp_path, out, tmp_path / "first.pid", 0)
    _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    before = snapshot(out)
    assert before["model/cpu/forward.pt2"] == b"fake forward.pt2"

    marker = tmp_path / "forward.pid"
    proc = start_compile(tmp_path, out, marker, 300, "--force", "-j", "2")
    deadline = time.monotonic() + 240
    while not marker.is_file() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert marker.is_file(), proc.communicate(timeout=60)
    time.sleep(0.5)  # forward's worker is now asleep with half a file written
    stdout, stderr = interrupt_and_wait(proc, 120)
    assert proc.returncode == 130, stderr
    assert stderr == "neml2-compile: interrupted\n"
    assert "done in" not in stdout
    assert snapshot(out) == before
    with pytest.raises(ProcessLookupError):
        os.kill(int(marker.read_text()), 0)


def test_the_stub_never_overwrites_the_input(
    fake: Calls, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Row 5: a source named <model>_aoti.i compiled with -o into its own folder."""
    source = tmp_path / "model_aoti.i"
    shutil.copy(ELASTIC, source)
    status, out, err = compile_here(capsys, source, "--model", "model", "-o", tmp_path)
    assert (status, out) == (2, "")
    assert err == (
        f"neml2-compile: error: -o {tmp_path}: the stub '{source}' would overwrite the input "
        f"file '{source}'; give another -o or rename the input file\n"
    )
    assert source.read_text() == ELASTIC.read_text()
    assert fake == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model_aoti.i"]


@pytest.mark.parametrize("name", ["..", "."])
def test_a_model_name_that_is_not_a_plain_name_is_refused(
    fake: Calls, capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    """Row 6: a block named '..' would put its artifact outside -o."""
    folder = tmp_path / "a" / "b"
    folder.mkdir(parents=True)
    source = folder / "m.i"
    source.write_text(ELASTIC.read_text().replace("[model]", f"[{name}]"))
    status, out, err = compile_here(capsys, source, "--model", name, "-o", folder / "out")
    assert (status, out) == (2, "")
    assert err == (
        f"{source}:{ELASTIC.read_text().splitlines().index('  [model]') + 1}: [Models/{name}]: "
        f"the model name '{name}' cannot name the artifact folder OUT/<model>/; rename the "
        "block to a plain name (not '.' or '..', no '/' or '\\')\n"
    )
    assert fake == []
    assert snapshot(tmp_path) == {"a/b/m.i": source.read_bytes()}


def test_check_model_name_refuses_separators() -> None:
    """Names HIT cannot spell as a block header ('a/b', '') are refused just the same."""
    from neml2.errors import InputError
    from neml2.hit import Section

    for name in ("", "a/b", "a\\b", "x\0y"):
        with pytest.raises(InputError, match="cannot name the artifact folder"):
            nc.check_model_name(Section(name=name, line=1, path="m.i"))
    nc.check_model_name(Section(name="model.v2", line=1, path="m.i"))


@pytest.mark.parametrize("case", ["file", "under-a-file", "model-folder-is-a-file"])
def test_output_paths_are_checked_before_compiling(
    fake: Calls, capsys: pytest.CaptureFixture[str], tmp_path: Path, case: str
) -> None:
    """Row 7: -o a file, or a folder below a file: one line, exit 2, nothing compiled."""
    blocker = tmp_path / "blocker"
    blocker.write_text("keep")
    out = {"file": blocker, "under-a-file": blocker / "sub", "model-folder-is-a-file": tmp_path}[
        case
    ]
    expected = {
        "file": f"-o {out}: exists and is not a folder",
        "under-a-file": f"-o {out}: '{blocker}' is a file, not a folder",
        "model-folder-is-a-file": f"-o {out}: '{tmp_path / 'model'}' is a file, where the "
        "artifact needs a folder",
    }[case]
    if case == "model-folder-is-a-file":
        (tmp_path / "model").write_text("keep")
    status, stdout, err = compile_here(capsys, ELASTIC, "--model", "model", "-o", out)
    assert (status, stdout, err) == (2, "", f"neml2-compile: error: {expected}\n")
    assert fake == []
    assert blocker.read_text() == "keep"


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into any folder")
def test_an_unwritable_output_is_refused_before_compiling(
    fake: Calls, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        status, stdout, err = compile_here(capsys, ELASTIC, "-o", locked / "aoti")
    finally:
        locked.chmod(0o700)
    assert (status, stdout) == (2, "")
    assert err == f"neml2-compile: error: -o {locked / 'aoti'}: '{locked}' is not writable\n"
    assert fake == []
