"""Conventions shared by neml2-compile and neml2-run (issue 31, rows 7, 13 and 14):
--version, no abbreviated options, -o/--output on both, --model optional when the file
holds one model, a finite --scale, an output file checked before running, and every
mistake one line with exit status 2."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import torch

import neml2
from neml2 import compile as nc
from neml2 import run as nr
from neml2.compile import workers as compile_workers

from .conftest import run_module
from .test_compile_cli import ELASTIC, TWO_MODELS

Main = Callable[[Sequence[str] | None], int]
CLIS = [("neml2-compile", nc.main), ("neml2-run", nr.main)]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Replace export + AOTInductor by writing a small file; record each graph."""
    graphs: list[str] = []

    def write(module: nc.Graph, device: torch.device, path: Path) -> None:
        graphs.append(module.graph)
        path.write_bytes(b"fake")

    monkeypatch.setattr(compile_workers, "compile_graph", write)
    return graphs


def call(main: Main, capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    """A CLI's main in this process (argparse's exit included): status, stdout, stderr."""
    try:
        status = main([str(a) for a in argv])
    except SystemExit as exit_info:
        status = int(exit_info.code or 0)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize(("prog", "main"), CLIS, ids=["compile", "run"])
def test_version(capsys: pytest.CaptureFixture[str], prog: str, main: Main) -> None:
    """Row 13."""
    assert call(main, capsys, "--version") == (0, f"{prog} {neml2.__version__}\n", "")


@pytest.mark.parametrize(("prog", "main"), CLIS, ids=["compile", "run"])
def test_no_abbreviated_options(
    fake: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path, prog: str, main: Main
) -> None:
    """Row 14: --mod is not --model; the mistake is one line (no usage), exit 2."""
    status, out, err = call(main, capsys, ELASTIC, "--mod", "model", "-o", tmp_path / "o")
    assert (status, out) == (2, "")
    assert err == (f"{prog}: error: unrecognized arguments: --mod model (see {prog} --help)\n")
    assert fake == []
    assert not (tmp_path / "o").exists()


def test_compile_takes_output_and_the_only_model(
    fake: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Row 14: --output as well as -o, and no --model for a file with one model."""
    status, _, err = call(nc.main, capsys, ELASTIC, "--output", tmp_path)
    assert status == 0, err
    assert fake == ["forward"]
    assert (tmp_path / "model_aoti.i").is_file()
    assert (tmp_path / "model" / "cpu" / "forward.pt2").read_bytes() == b"fake"


def test_run_takes_o_and_the_only_model(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Row 14: -o as well as --output, and no --model for a file with one model."""
    status, out, err = call(nr.main, capsys, ELASTIC, "--batch", "3", "-o", tmp_path / "o.pt")
    assert status == 0, err
    assert "model 'model' (LinearIsotropicElasticity, eager) on cpu" in out
    assert torch.load(tmp_path / "o.pt", weights_only=True)["stress"].shape == (3, 6)


@pytest.mark.parametrize(("prog", "main"), CLIS, ids=["compile", "run"])
def test_several_models_need_model(
    fake: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path, prog: str, main: Main
) -> None:
    source = tmp_path / "two.i"
    source.write_text(TWO_MODELS)
    status, out, err = call(main, capsys, source, "-o", tmp_path / "o")
    assert (status, out) == (2, "")
    assert err == (
        f"{prog}: error: {source} defines 2 models (model, other): choose one with --model NAME\n"
    )
    assert fake == []


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_run_refuses_a_non_finite_scale(capsys: pytest.CaptureFixture[str], value: str) -> None:
    """Row 14: --scale nan gave NaN inputs and exit 0."""
    assert call(nr.main, capsys, ELASTIC, f"--scale={value}") == (
        2,
        "",
        f"neml2-run: error: argument --scale: expected a finite number, got '{value}' "
        "(see neml2-run --help)\n",
    )


@pytest.mark.parametrize("case", ["folder", "missing-folder"])
def test_run_checks_its_output_before_running(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, case: str
) -> None:
    """Row 7: --output a folder (or in a missing one) is refused before the forward runs:
    nothing is printed on stdout."""
    target = tmp_path if case == "folder" else tmp_path / "missing" / "o.pt"
    expected = {
        "folder": f"--output {target}: is a folder; give a file name",
        "missing-folder": f"--output {target}: no such folder '{target.parent}'",
    }[case]
    assert call(nr.main, capsys, ELASTIC, "--model", "model", "--output", target) == (
        2,
        "",
        f"neml2-run: error: {expected}\n",
    )


@pytest.mark.aoti
def test_run_a_stub_without_model(loadable_elastic: tuple[Path, str]) -> None:
    """--model optional for a stub: it holds one model."""
    result = run_module("neml2.run", loadable_elastic[0] / "model_aoti.i", "--batch", "2")
    assert result.returncode == 0, result.stderr
    assert "model 'model' (LinearIsotropicElasticity, compiled) on cpu" in result.stdout
