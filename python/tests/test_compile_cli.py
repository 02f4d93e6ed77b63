"""neml2-compile usability: progress lines, -j N, skipping up-to-date folders, --dtype, --help.

Most tests replace the compile step (in process, or through a ``sitecustomize`` in the
spawned workers) so that they check the bookkeeping in seconds; the ``aoti`` ones compile.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from neml2 import compile as nc
from neml2.compile import workers as compile_workers

from .conftest import FIXTURES, run_module
from .test_cli import assert_user_error

ELASTIC = FIXTURES / "forward_single" / "model.i"
VISCOPLASTIC = FIXTURES / "viscoplastic" / "model.i"
#: forward_single plus a block the model does not depend on.
TWO_MODELS = """\
E = 100

[Models]
  [model]
    type = LinearIsotropicElasticity
    coefficients = '${E} 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
  [other]
    type = LinearIsotropicElasticity
    coefficients = '200 0.3'
    coefficient_types = 'YOUNGS_MODULUS POISSONS_RATIO'
  []
[]
"""

Compiled = list[tuple[str, str, torch.dtype]]


@pytest.fixture
def fake_compile(monkeypatch: pytest.MonkeyPatch) -> Compiled:
    """Replace export + AOTInductor by writing a small file; record (device, graph, dtype)."""
    calls: Compiled = []

    def fake(module: nc.Graph, device: torch.device, path: Path) -> None:
        dtype = module.example_args(device)[0].dtype
        calls.append((device.type, module.graph, dtype))
        path.write_bytes(module.graph.encode() * 10)

    monkeypatch.setattr(compile_workers, "compile_graph", fake)
    return calls


def compile_here(
    capsys: pytest.CaptureFixture[str], source: Path, out: Path, *options: str
) -> tuple[int, str, str]:
    """neml2-compile in this process (-j 1): exit status, stdout and stderr."""
    status = nc.main([str(source), "--model", "model", "-o", str(out), *options])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_progress_lines_and_total(
    fake_compile: Compiled, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, _ = compile_here(capsys, ELASTIC, tmp_path, "-d", ":")
    assert status == 0
    folder = tmp_path / "model" / "cpu"
    lines = out.splitlines()
    graphs = "3 graphs to compile (forward, jvp, jacobian)"
    assert lines[0] == f"{folder}: {graphs}; not compiled before"
    for index, graph in enumerate(["forward", "jvp", "jacobian"]):
        assert lines[1 + 2 * index] == f"[{index + 1}/3] compiling {graph} for cpu ..."
        assert re.fullmatch(rf"{folder}/{graph}\.pt2: compiled in \d+\.\d s", lines[2 + 2 * index])
    assert re.fullmatch(rf"{folder}: done in \d+\.\d s", lines[7])
    assert lines[8] == f"{tmp_path / 'model_aoti.i'}: written"
    assert re.fullmatch(r"done in \d+\.\d s: 3 graphs compiled", lines[9])
    assert len(lines) == 10
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [".neml2-fingerprint", "forward.pt2", "jvp.pt2", "jacobian.pt2", "model_meta.json"]
    )


def test_second_run_is_skipped(
    fake_compile: Compiled, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert compile_here(capsys, ELASTIC, tmp_path, "-d", ":", "-p", "E")[0] == 0
    assert len(fake_compile) == 5
    meta = (tmp_path / "model" / "cpu" / "model_meta.json").read_text()
    status, out, _ = compile_here(capsys, ELASTIC, tmp_path, "-d", ":", "-p", "E")
    assert status == 0
    assert len(fake_compile) == 5
    assert out.splitlines()[0] == f"{tmp_path / 'model' / 'cpu'}: up to date, skipped"
    assert re.fullmatch(
        r"done in \d+\.\d s: 0 graphs compiled, 1 device folder up to date", out.splitlines()[-1]
    )
    assert (tmp_path / "model" / "cpu" / "model_meta.json").read_text() == meta


def test_graphs_keeps_some_of_the_graphs(
    fake_compile: Compiled, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    options = ["-d", ":", "-p", ":", "--graphs", "param_vjp", "jacobian"]
    status, out, _ = compile_here(capsys, ELASTIC, tmp_path, *options)
    assert status == 0
    assert [graph for _, graph, _ in fake_compile] == ["forward", "jacobian", "param_vjp"]
    folder = tmp_path / "model" / "cpu"
    assert "3 graphs to compile (forward, jacobian, param_vjp)" in out.splitlines()[0]
    meta = json.loads((folder / "model_meta.json").read_text())
    assert list(meta["graphs"]) == ["forward", "jacobian", "param_vjp"]
    assert [(d["of"], d["wrt"]) for d in meta["derivatives"]] == [("stress", "strain")]
    assert meta["param_derivatives"] == []
    # the graph set is part of the fingerprint: all of them is a change, the same is not
    status, out, _ = compile_here(capsys, ELASTIC, tmp_path, "-d", ":", "-p", ":")
    assert "5 graphs to compile" in out.splitlines()[0]
    status, out, _ = compile_here(capsys, ELASTIC, tmp_path, "-d", ":", "-p", ":")
    assert out.splitlines()[0] == f"{folder}: up to date, skipped"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ["-d", ":", "--graphs", "hessian"],
            "--graphs hessian: no such graph; graphs: forward, jvp, jacobian, param_jacobian, "
            "param_vjp",
        ),
        (
            ["-d", ":", "--graphs", "param_vjp"],
            "--graphs param_vjp: param_vjp needs -p; with these options: forward, jvp, jacobian",
        ),
        (
            ["-p", ":", "--graphs", "param_jacobian"],
            "--graphs param_jacobian: param_jacobian needs -d and -p; with these options: "
            "forward, param_vjp",
        ),
    ],
    ids=["unknown", "needs-p", "needs-d-and-p"],
)
def test_graphs_refuses_a_graph_it_cannot_make(
    fake_compile: Compiled,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    options: list[str],
    message: str,
) -> None:
    status, out, err = compile_here(capsys, ELASTIC, tmp_path, *options)
    assert (status, out, err) == (2, "", f"neml2-compile: error: {message}\n")
    assert fake_compile == []
    assert list(tmp_path.iterdir()) == []


def edit(old: str, new: str) -> Callable[[Path, list[str]], list[str]]:
    def change(source: Path, options: list[str]) -> list[str]:
        text = source.read_text()
        assert old in text
        source.write_text(text.replace(old, new))
        return options

    return change


def options(*extra: str) -> Callable[[Path, list[str]], list[str]]:
    return lambda source, opts: [*opts, *extra]


def swap(old: str, new: str) -> Callable[[Path, list[str]], list[str]]:
    return lambda source, opts: [new if o == old else o for o in opts]


@pytest.mark.parametrize(
    ("source_text", "change", "reason"),
    [
        (TWO_MODELS, edit("E = 100", "E = 101"), "changed: input blocks, parameter values, "),
        (TWO_MODELS, edit("'${E} 0.3'", "'${E} 0.31'"), "changed: input blocks, parameter"),
        (TWO_MODELS, swap("E", "nu"), "changed: flags, dtype or variables"),
        (TWO_MODELS, options("-d", ":"), "changed: flags, dtype or variables"),
        (TWO_MODELS, options("--dtype", "float32"), "changed: parameter values, flags, dtype"),
        (TWO_MODELS, options("--force"), "--force"),
        (
            VISCOPLASTIC.read_text(),
            edit("rel_tol = 1e-10", "rel_tol = 1e-9"),
            "changed: input blocks",
        ),
    ],
    ids=["variable", "parameter", "promoted", "pairs", "dtype", "force", "solver"],
)
def test_a_change_recompiles(
    fake_compile: Compiled,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    source_text: str,
    change: Callable[[Path, list[str]], list[str]],
    reason: str,
) -> None:
    source = tmp_path / "model.i"
    source.write_text(source_text)
    out = tmp_path / "out"
    first = ["-p", "E"] if "E = 100" in source_text else []
    assert compile_here(capsys, source, out, *first)[0] == 0
    before = len(fake_compile)
    assert compile_here(capsys, source, out, *first)[1].startswith(f"{out}/model/cpu: up to date")
    status, stdout, err = compile_here(capsys, source, out, *change(source, first))
    assert status == 0, err
    assert "up to date" not in stdout
    assert reason in stdout.splitlines()[0]
    assert len(fake_compile) > before


def test_an_unrelated_block_does_not_recompile(
    fake_compile: Compiled, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source = tmp_path / "model.i"
    source.write_text(TWO_MODELS)
    assert compile_here(capsys, source, tmp_path / "out")[0] == 0
    source.write_text(TWO_MODELS.replace("'200 0.3'", "'300 0.3'"))
    _, out, _ = compile_here(capsys, source, tmp_path / "out")
    assert "up to date, skipped" in out
    assert len(fake_compile) == 1


def flip_bytes(folder: Path) -> None:
    """Invert forward.pt2's bytes, keeping its size (issue 31, row 1: the fingerprint
    compared sizes only, and called such a folder up to date)."""
    path = folder / "forward.pt2"
    path.write_bytes(bytes(b ^ 0xFF for b in path.read_bytes()))


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda f: (f / "forward.pt2").unlink(), "forward.pt2 is missing"),
        (lambda f: (f / "forward.pt2").write_bytes(b"x"), "forward.pt2 changed size"),
        (flip_bytes, "forward.pt2 changed since it was compiled (SHA-256 differs)"),
        (lambda f: (f / "model_meta.json").write_text("{}"), "model_meta.json was edited"),
        (lambda f: (f / ".neml2-fingerprint").unlink(), "no .neml2-fingerprint"),
    ],
    ids=["missing", "truncated", "flipped", "meta", "fingerprint"],
)
def test_a_damaged_folder_recompiles(
    fake_compile: Compiled,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    damage: Callable[[Path], object],
    reason: str,
) -> None:
    assert compile_here(capsys, ELASTIC, tmp_path)[0] == 0
    damage(tmp_path / "model" / "cpu")
    _, out, _ = compile_here(capsys, ELASTIC, tmp_path)
    assert out.splitlines()[0].endswith(f"; {reason}")
    assert len(fake_compile) == 2
    assert compile_here(capsys, ELASTIC, tmp_path)[1].startswith(f"{tmp_path}/model/cpu: up to")


def test_dtype_float32(
    fake_compile: Compiled, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert compile_here(capsys, ELASTIC, tmp_path, "-p", ":", "--dtype", "float32")[0] == 0
    assert {dtype for _, _, dtype in fake_compile} == {torch.float32}
    meta = json.loads((tmp_path / "model" / "cpu" / "model_meta.json").read_text())
    assert meta["dtype"] == "float32"
    assert meta["parameters"][1] == {
        "name": "model.nu",
        "shape": [],
        "value": [torch.tensor(0.3, dtype=torch.float32).item()],
    }
    # the graphs themselves compute in float32 (export only; the compile is faked above)
    prep = nc.prepare(nc.Request(str(ELASTIC), "model", (":",), (":",), "float32"))
    for graph in prep.sel.graphs():
        module = nc.Graph(prep.model, graph, prep.sel, prep.dtype)
        returns = module(*module.example_args(torch.device("cpu")))
        assert {r.dtype for r in returns} == {torch.float32}, graph


def test_dtype_float32_refuses_a_solver_tolerance_it_cannot_reach(tmp_path: Path) -> None:
    result = run_module(
        "neml2.compile", VISCOPLASTIC, "--model", "model", "--dtype", "float32", "-o", tmp_path
    )
    assert_user_error(
        result,
        "neml2-compile: error: --dtype float32: [Solvers/newton] sets rel_tol = 1e-10, finer "
        "than float32 resolves (about 1.2e-07), so the solve of model 'model' would never "
        "converge; set rel_tol >= 1e-06 in a [Solvers] block or compile with --dtype float64",
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--dtype", "float16"], "argument --dtype: invalid choice: 'float16'"),
        (["-j", "0"], "argument -j/--jobs: expected a positive integer, got '0'"),
        (["--jobs", "two"], "argument -j/--jobs: expected a positive integer, got 'two'"),
    ],
)
def test_bad_option_values(tmp_path: Path, option: list[str], message: str) -> None:
    result = run_module("neml2.compile", ELASTIC, "--model", "model", *option, "-o", tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert message in result.stderr.splitlines()[-1]
    assert list(tmp_path.iterdir()) == []


def test_help_explains_every_option() -> None:
    result = run_module("neml2.compile", "--help")
    assert result.returncode == 0
    text = result.stdout
    parser = nc.make_parser()
    for action in parser._actions:
        for flag in action.option_strings:
            assert flag in text, flag
        if action.option_strings and action.dest not in ("help", "version"):
            assert action.help, action.dest
            assert action.required or "default" in action.help, action.dest
    assert "neml2-compile tests/aoti/forward_single/model.i --model model" in text
    assert "doc/artifacts.md" in text
    assert "up to date" in text


PARSED = {
    "file": "m.i",
    "model": "model",
    "device": ["cpu"],
    "pairs": [],
    "params": [],
    "graphs": [],
}


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--device", "cpu", "m.i", "--model", "model"], {}),
        (["m.i", "--model", "model", "--device", "cpu"], {}),
        (["--model", "model", "--device", "cpu", "cuda", "m.i"], {"device": ["cpu", "cuda"]}),
        (["--device", "cpu", "m.i", "-d", ":", "--model", "model"], {"pairs": [":"]}),
        (["-d", ":", "m.i", "--model", "model"], {"pairs": [":"]}),
        (["-p", ":", "m.i", "--model", "model"], {"params": [":"]}),
        (["m.i", "--model", "model", "-d", ":", "-p", ":"], {"pairs": [":"], "params": [":"]}),
        (
            ["-d", "a:b", "-d", "c:d", "e:", "m.i", "-p", "E", "nu", "--model", "model"],
            {"pairs": ["a:b", "c:d", "e:"], "params": ["E", "nu"]},
        ),
        (
            ["--model", "model", "-d", "a:b", "m.i", "--device", "cpu", "cuda", "-d", "c:d"],
            {"pairs": ["a:b", "c:d"], "device": ["cpu", "cuda"]},
        ),
        (["--device", "cuda", "m.i", "--device", "cpu", "--model", "model"], {}),
        (
            ["-d", ":", "--graphs", "jacobian", "m.i", "--model", "model"],
            {"pairs": [":"], "graphs": ["jacobian"]},
        ),
    ],
    ids=[
        "device-before",
        "device-after",
        "devices-before",
        "between",
        "pairs-before",
        "params-before",
        "after",
        "repeated-before",
        "repeated-around",
        "last-device-wins",
        "graphs-before",
    ],
)
def test_options_before_or_after_file(argv: list[str], expected: dict[str, Any]) -> None:
    args = vars(nc.parse_args(argv))
    assert {key: args[key] for key in PARSED} == {**PARSED, **expected}


def test_a_file_without_the_i_suffix_is_taken_back_when_it_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model").write_text("")
    args = nc.parse_args(["-p", "E", "model", "--model", "model"])
    assert (args.file, args.params) == ("model", ["E"])
    # a positional FILE leaves the values alone
    args = nc.parse_args(["m.i", "-p", "E", "model", "--model", "model"])
    assert (args.file, args.params) == ("m.i", ["E", "model"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--model", "model"], "the following arguments are required: FILE"),
        (["--model", "model", "-d", ":"], "the following arguments are required: FILE"),
        (["--model", "model", "-d", "m.i"], "the following arguments are required: FILE"),
        (["--model", "model", "--device", "cpu", "cuda"], "the following arguments are required"),
        (["-d", ":", "a.i", "-p", "E", "b.i", "--model", "model"], "FILE given twice: 'a.i'"),
    ],
    ids=["none", "pairs", "only-value", "devices", "twice"],
)
def test_a_missing_file_is_named(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        nc.parse_args(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err  # one line, no usage
    assert err.startswith(f"neml2-compile: error: {message}")


def test_a_missing_file_from_the_command_line(tmp_path: Path) -> None:
    result = run_module("neml2.compile", "--model", "model", "-d", ":", "-o", tmp_path)
    assert_user_error(
        result,
        "neml2-compile: error: the following arguments are required: FILE "
        "(see neml2-compile --help)",
    )
    assert list(tmp_path.iterdir()) == []


def test_options_before_file_compile_the_same(
    fake_compile: Compiled, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = str(tmp_path)
    first = nc.main(["--device", "cpu", "-d", ":", "-p", "E", str(ELASTIC), "--model", "model",
                     "-o", out])  # fmt: skip
    assert first == 0, capsys.readouterr().err
    assert [graph for _, graph, _ in fake_compile] == [
        "forward", "jvp", "jacobian", "param_jacobian", "param_vjp",
    ]  # fmt: skip
    capsys.readouterr()
    again = nc.main([str(ELASTIC), "--model", "model", "-o", out, "-d", ":", "-p", "E"])
    assert again == 0
    assert capsys.readouterr().out.startswith(f"{tmp_path / 'model' / 'cpu'}: up to date")


@pytest.mark.aoti
def test_options_before_file_from_the_command_line(tmp_path: Path) -> None:
    """A real compile (forward only, the cheapest) with --device's values before FILE."""
    result = run_module(
        "neml2.compile", "--device", "cpu", ELASTIC, "--model", "model", "-o", tmp_path
    )
    assert result.returncode == 0, result.stderr
    folder = tmp_path / "model" / "cpu"
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [".neml2-fingerprint", "forward.pt2", "model_meta.json"]
    )
    assert json.loads((folder / "model_meta.json").read_text())["device"] == "cpu"
    assert (tmp_path / "model_aoti.i").is_file()


#: Patched into every process (the CLI and its spawned workers): compiling param_vjp
#: fails at once; forward writes its pid, then sleeps FAKE_SLEEP seconds.
SITECUSTOMIZE = """\
import os, pathlib, time
import torch._inductor

def fake(program, package_path, inductor_configs=None):
    path = pathlib.Path(package_path)
    if path.name == "param_vjp.pt2":
        raise RuntimeError("injected failure\\nsecond line")
    marker = pathlib.Path(os.environ["FAKE_MARKER"])
    marker.write_text(str(os.getpid()))
    time.sleep(float(os.environ["FAKE_SLEEP"]))
    path.write_bytes(b"fake")
    marker.with_suffix(".finished").write_text("")

torch._inductor.aoti_compile_and_package = fake
"""


def run_with_failure(tmp_path: Path, jobs: str, sleep: float) -> tuple[Any, float, Path]:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    marker = tmp_path / f"forward-{jobs}.pid"
    env = {"FAKE_MARKER": str(marker), "FAKE_SLEEP": str(sleep)}
    saved = {k: os.environ.get(k) for k in [*env, "PYTHONPATH"]}
    os.environ.update(env)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), saved["PYTHONPATH"]]))
    start = time.monotonic()
    try:
        result = run_module(
            "neml2.compile", ELASTIC, "--model", "model", "-p", "E", "-j", jobs,
            "-o", tmp_path / f"out-{jobs}",
        )  # fmt: skip
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return result, time.monotonic() - start, marker


FAILURE = (
    "neml2-compile: error: compiling param_vjp for cpu failed: RuntimeError: injected failure "
    "(rerun with --verbose for the full traceback)"
)


def test_a_failing_compile_under_jobs_stops_the_others(tmp_path: Path) -> None:
    """-j 2: param_vjp fails while forward sleeps for minutes; forward's worker is ended."""
    serial, _, _ = run_with_failure(tmp_path, "1", 0)
    assert_user_error(serial, FAILURE)
    result, seconds, marker = run_with_failure(tmp_path, "2", 300)
    assert_user_error(result, FAILURE)
    assert seconds < 120, seconds
    assert marker.is_file(), "forward never started in its worker"
    assert not marker.with_suffix(".finished").exists()
    with pytest.raises(ProcessLookupError):
        os.kill(int(marker.read_text()), 0)
    assert not (tmp_path / "out-2" / "model" / "cpu" / ".neml2-fingerprint").exists()


@pytest.fixture(scope="module")
def parallel_and_serial(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """forward_single with -p E (forward, param_vjp) compiled with -j 2 and with -j 1."""
    out = {}
    stdout = ""
    for jobs in ("2", "1"):
        out[jobs] = tmp_path_factory.mktemp(f"jobs{jobs}")
        result = run_module(
            "neml2.compile", ELASTIC, "--model", "model", "-p", "E", "-j", jobs, "-o", out[jobs]
        )
        assert result.returncode == 0, result.stderr
        stdout = stdout or result.stdout
    return out["2"], out["1"], stdout


@pytest.mark.aoti
def test_jobs_give_the_same_artifact(parallel_and_serial: tuple[Path, Path, str]) -> None:
    parallel, serial, stdout = parallel_and_serial
    a, b = parallel / "model" / "cpu", serial / "model" / "cpu"
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir())
    assert names == [".neml2-fingerprint", "forward.pt2", "model_meta.json", "param_vjp.pt2"]
    assert (a / "model_meta.json").read_text() == (b / "model_meta.json").read_text()
    fingerprints = [json.loads((f / ".neml2-fingerprint").read_text()) for f in (a, b)]
    assert fingerprints[0]["fingerprint"] == fingerprints[1]["fingerprint"]
    assert (parallel / "model_aoti.i").read_text() == (serial / "model_aoti.i").read_text()
    # one line per started and per finished graph, whichever finishes first
    lines = stdout.splitlines()
    assert sorted(line for line in lines if "compiling" in line and "for cpu" in line) == [
        "[1/2] compiling forward for cpu ...",
        "[2/2] compiling param_vjp for cpu ...",
    ]
    done = sorted(line.split(":")[0] for line in lines if ": compiled in " in line)
    assert done == [str(a / "forward.pt2"), str(a / "param_vjp.pt2")]


@pytest.mark.aoti
def test_a_compiled_artifact_is_skipped_then_forced(
    parallel_and_serial: tuple[Path, Path, str], tmp_path: Path
) -> None:
    out = tmp_path / "copy"
    shutil.copytree(parallel_and_serial[0], out)
    args = ("neml2.compile", ELASTIC, "--model", "model", "-p", "E", "-o", out)
    again = run_module(*args, "-j", "2")
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[0] == f"{out / 'model' / 'cpu'}: up to date, skipped"
    assert "compiled in" not in again.stdout
    forced = run_module(*args, "--force", "-j", "2")
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.splitlines()[0].endswith("; --force")
    assert forced.stdout.count(": compiled in ") == 2
