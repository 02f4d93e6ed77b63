"""NEML2 3.1.0 (PyPI) as the oracle: every file of tests/neml2_inputs evaluates as in NEML2.

PyPI's NEML2 is also the package ``neml2``, so it lives in an environment of its own
(``.venv-neml2``, made by scripts/setup.sh; ``NEML2_ORACLE_PYTHON`` names another) and
runs as a child process (tests/neml2_inputs/neml2_oracle.py) on the same inputs. Each
file's block ``model`` is compared, outputs and every Jacobian block, at rtol 1e-8;
the two composed J2 models are driven over 24 time steps, each step starting from the
state the previous one left. So is the C++ tests' fixture j2_composed, the same model
with other constants, whose compiled graphs (ctest's artifacts, or compiled here once per
session), loaded with ``neml2.load_model``, are compared with NEML2 on its 24 steps.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from neml2 import hit, load_model
from neml2.errors import ConvergenceError
from neml2.models import Model, build_model, model_section
from neml2.shim import CompiledModel

from .conftest import FIXTURES, PYTHON_DIR, REPO, compile_fixture

INPUTS = REPO / "tests" / "neml2_inputs"
ORACLE = INPUTS / "neml2_oracle.py"
TRANSIENT = ("j2_viscoplastic.i", "j2_rate_independent.i")
FILES = sorted(p.name for p in INPUTS.glob("*.i"))
BATCH = 5
STEPS = 24
RTOL = 1e-8
#: What NEML2 3.1.0's extension raises, intermittently, in its eager Newton solve under
#: torch 2.13 (an extension built for another torch).
LAYOUT_BUGS = (
    "doesn't support converting to a different layout",
    "layout_impl is only implemented for TensorImpl subclasses",
)
ORACLE_ATTEMPTS = 4


def oracle_env() -> dict[str, str]:
    """The environment of an oracle process: this one's without PYTHONPATH, which names this
    project's own package ``neml2`` under ctest and would shadow NEML2's."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def oracle_python() -> str:
    """The Python with NEML2 3.1.0, or a skip where there is none. One that exists but does
    not import NEML2 3.1.0 fails the test: a broken oracle must not pass as a skipped one."""
    python = os.environ.get("NEML2_ORACLE_PYTHON", str(REPO / ".venv-neml2" / "bin" / "python"))
    if not Path(python).exists():
        pytest.skip(
            f"NEML2 3.1.0 is not installed ({python} does not exist; scripts/setup.sh "
            "makes it where Python 3.11 and the neml2 wheel are available)"
        )
    probe = subprocess.run(
        [python, "-c", "import neml2, torch; print(open(neml2.__path__[0] + '/version').read())"],
        capture_output=True,
        text=True,
        check=False,
        cwd=INPUTS,  # not beside this project's own package neml2
        env=oracle_env(),
    )
    assert probe.returncode == 0, f"{python} does not import NEML2: {probe.stderr[-300:]}"
    assert "3.1.0" in probe.stdout, f"{python} imports NEML2 {probe.stdout.strip()}, not 3.1.0"
    return python


def source(name: str) -> Path:
    """The input file: ``name`` in tests/neml2_inputs, or the model.i of the C++ tests'
    fixture ``name`` (a name without ``.i``)."""
    return INPUTS / name if name.endswith(".i") else FIXTURES / name / "model.i"


def build(name: str) -> Model:
    return build_model(model_section(hit.load(source(name)), "model"))


#: Sample values per variable name (the rest: scalars in [0.5, 1.5), SR2 of size 1e-2).
SAMPLES: dict[str, Callable[[torch.Generator, tuple[int, ...]], torch.Tensor]] = {
    "temperature": lambda g, s: 300 + 200 * torch.rand(s, generator=g, dtype=torch.float64),
    "yield_function": lambda g, s: 50 * torch.randn(s, generator=g, dtype=torch.float64),
    "f": lambda g, s: 50 * torch.randn(s, generator=g, dtype=torch.float64),
    "dep": lambda g, s: 1e-3 * torch.randn(s, generator=g, dtype=torch.float64),
    "t~1": lambda g, s: 0.4 * torch.ones(s, dtype=torch.float64),
    "time~1": lambda g, s: 0.4 * torch.ones(s, dtype=torch.float64),
    "effective_stress": lambda g, s: 300 * torch.rand(s, generator=g, dtype=torch.float64),
}
STRESS_LIKE = ("S", "stress", "mandel_stress", "back_stress", "trial_stress")


def sample(model: Model, seed: int = 0) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    x = {}
    for v in model.inputs:
        shape = (BATCH, *v.shape)
        if v.name in SAMPLES:
            x[v.name] = SAMPLES[v.name](g, shape)
        elif v.shape:
            scale = 100.0 if v.name in STRESS_LIKE else 1e-2
            x[v.name] = scale * torch.randn(shape, generator=g, dtype=torch.float64)
        else:
            x[v.name] = 0.5 + torch.rand(shape, generator=g, dtype=torch.float64)
    return x


def full_blocks(model: Model | CompiledModel, jac: dict[str, dict[str, torch.Tensor]]) -> dict:
    """Every Jacobian block as (B, *of, *wrt), unbatched ones repeated."""
    shapes = {v.name: v.shape for v in (*model.inputs, *model.outputs)}
    out: dict = {}
    for of, row in jac.items():
        out[of] = {}
        for wrt, block in row.items():
            shape = (*shapes[of], *shapes[wrt])
            out[of][wrt] = block if block.dim() > len(shape) else block.expand(BATCH, *shape)
    return out


def strain_path(step: int) -> torch.Tensor:
    """Mixed loading: a ramp to 1.5 % axial strain with shear, then partial unloading."""
    peak = 14
    level = min(step, peak) - max(0, step - peak) * 0.6
    scale = torch.linspace(0.5, 1.5, BATCH, dtype=torch.float64).unsqueeze(-1)
    direction = torch.tensor([1.0, -0.3, -0.4, 0.1, 0.0, 0.5], dtype=torch.float64)
    return 1.1e-3 * level * scale * direction


def drive(model: Model) -> tuple[list[dict[str, torch.Tensor]], list[dict], list[dict]]:
    """STEPS steps of our eager model: the inputs, outputs and Jacobians of each."""
    steps, outputs, jacobians = [], [], []
    state = {"plastic_strain": torch.zeros(BATCH, 6, dtype=torch.float64)}
    state["equivalent_plastic_strain"] = torch.zeros(BATCH, dtype=torch.float64)
    for step in range(1, STEPS + 1):
        x = {
            "strain": strain_path(step),
            "plastic_strain~1": state["plastic_strain"],
            "equivalent_plastic_strain~1": state["equivalent_plastic_strain"],
            "t": torch.full((BATCH,), 0.5 * step, dtype=torch.float64),
            "t~1": torch.full((BATCH,), 0.5 * (step - 1), dtype=torch.float64),
        }
        out = model.forward(x)
        steps.append(x)
        outputs.append(out)
        jacobians.append(full_blocks(model, model.jacobian(x)))
        state = {k: out[k] for k in state}
    return steps, outputs, jacobians


def run_oracle(python: str, tmp_path: Path, name: str, steps: list) -> list[dict]:
    request, result = tmp_path / f"{name}.request.pt", tmp_path / f"{name}.result.pt"
    torch.save(
        {"file": str(source(name)), "model": "model", "batch": BATCH, "steps": steps}, request
    )
    # NEML2's extension fails now and then inside its Newton solve under this torch (a
    # build for another torch reading a tensor's layout): a crash, not an answer, so a
    # crashed run is repeated, and the test skips when every attempt crashed
    for _ in range(ORACLE_ATTEMPTS):
        done = subprocess.run(
            [python, str(ORACLE), str(request), str(result)],
            capture_output=True,
            text=True,
            check=False,
            cwd=INPUTS,
            env=oracle_env(),
        )
        if done.returncode == 0 or not any(bug in done.stderr for bug in LAYOUT_BUGS):
            break
    else:
        pytest.skip(
            f"NEML2 3.1.0's compiled Newton solve crashed on {name} in {ORACLE_ATTEMPTS} "
            f"runs under torch {torch.__version__} ({done.stderr.strip().splitlines()[-1]}): "
            "its extension was built for another torch; a torch matching NEML2's build is missing"
        )
    assert done.returncode == 0, f"NEML2 failed on {name}: {done.stderr[-2000:]}"
    return torch.load(result)["steps"]


def assert_agree(ours: dict, theirs: dict, what: str) -> None:
    assert set(ours) == set(theirs), what
    for key in ours:
        a, b = ours[key], theirs[key]
        if isinstance(a, dict):
            assert_agree(a, b, f"{what}[{key}]")
            continue
        assert tuple(a.shape) == tuple(b.shape), f"{what}[{key}]: {a.shape} vs {b.shape}"
        scale = max(float(b.abs().max()), 1e-300)
        torch.testing.assert_close(a, b, rtol=RTOL, atol=RTOL * 1e-6 * scale, msg=f"{what}[{key}]")


ONE_STEP = [f for f in FILES if f not in TRANSIENT]


@pytest.fixture(scope="module")
def one_step_answers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """NEML2's answer for every one-step file, from one oracle process (a process per file
    spent most of its time starting NEML2)."""
    from .oracle import Case, answers  # oracle.py imports this module

    oracle_python()
    cases = [Case(source(name), sample(build(name))) for name in ONE_STEP]
    return dict(zip(ONE_STEP, answers(tmp_path_factory.mktemp("oracle"), cases), strict=True))


@pytest.mark.parametrize("name", ONE_STEP)
def test_one_model_agrees_with_neml2(name: str, one_step_answers: dict[str, dict]) -> None:
    model = build(name)
    x = sample(model)
    theirs = one_step_answers[name]
    assert "error" not in theirs, f"NEML2 refused {name}: {theirs['error']}"
    assert_agree(model.forward(x), theirs["outputs"], f"{name} outputs")
    assert_agree(full_blocks(model, model.jacobian(x)), theirs["jacobian"], f"{name} jacobian")


#: One run per composed J2 file: the steps' inputs, our eager outputs and Jacobians, NEML2's.
Reference = tuple[list[dict[str, torch.Tensor]], list[dict], list[dict], list[dict]]


@pytest.fixture(scope="session")
def j2_reference(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Reference]:
    """The eager drive of a composed J2 file and NEML2's answers on its inputs, run once
    per file and session (the eager and the compiled comparison share them)."""
    done: dict[str, Reference] = {}

    def reference(name: str) -> Reference:
        if name not in done:
            python = oracle_python()
            model = build(name)
            assert model.implicit
            steps, outputs, jacobians = drive(model)
            folder = tmp_path_factory.mktemp("oracle")
            done[name] = (steps, outputs, jacobians, run_oracle(python, folder, name, steps))
        return done[name]

    return reference


#: Loads a compiled composed J2 stub and runs forward on one elastic step (neml2-run's
#: random inputs may ask the Newton solve for more than it converges in).
LOAD_CHECK = """
import sys, torch
from neml2 import load_model
m = load_model(sys.argv[1], "model")
x = {v.name: torch.zeros((1, *v.shape), dtype=torch.float64) for v in m.inputs}
x["t"] = torch.ones(1, dtype=torch.float64)
print(sorted(m.forward(x)))
"""


def require_loadable_j2(stub: Path) -> None:
    """Load a compiled stub in a child first, so that a loader crash fails one test."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PYTHON_DIR), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", LOAD_CHECK, str(stub)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, f"loading {stub} failed ({done.returncode}): {done.stderr}"
    assert "stress" in done.stdout


@pytest.fixture(scope="session")
def compiled_j2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The stub of the C++ tests' fixture j2_composed (the composed J2 viscoplastic model
    with NEML2's blocks, compiled with forward and jacobian): ctest's artifacts
    where it compiled them, else compiled here once per session."""
    out, _ = compile_fixture(tmp_path_factory, "j2_composed")
    require_loadable_j2(out / "model_aoti.i")
    return out / "model_aoti.i"


@pytest.mark.parametrize("name", TRANSIENT)
def test_composed_j2_over_steps_agrees_with_neml2(
    name: str, j2_reference: Callable[[str], Reference]
) -> None:
    steps, outputs, jacobians, theirs = j2_reference(name)
    # the path yields: plastic strain grows, and some steps unload elastically
    assert float(outputs[-1]["equivalent_plastic_strain"].min()) > 1e-4
    assert len(steps) == len(theirs) == STEPS >= 20
    for step, (out, jac, ref) in enumerate(zip(outputs, jacobians, theirs, strict=True)):
        assert_agree(out, ref["outputs"], f"{name} step {step + 1} outputs")
        assert_agree(jac, ref["jacobian"], f"{name} step {step + 1} jacobian")


@pytest.mark.aoti
def test_compiled_composed_j2_over_steps_agrees_with_neml2(
    j2_reference: Callable[[str], Reference], compiled_j2: Path
) -> None:
    name = "j2_composed"
    steps, _, _, theirs = j2_reference(name)
    compiled = load_model(compiled_j2, "model")
    assert isinstance(compiled, CompiledModel)
    assert compiled.meta["status"] == {"converged": "converged", "residual": "residual"}
    assert [v.name for v in compiled.inputs] == [v.name for v in build(name).inputs]
    assert len(steps) == len(theirs) == STEPS >= 20
    for step, (x, ref) in enumerate(zip(steps, theirs, strict=True)):
        what = f"compiled {name} step {step + 1}"
        assert_agree(compiled.forward(x), ref["outputs"], f"{what} outputs")
        assert_agree(
            full_blocks(compiled, compiled.jacobian(x)), ref["jacobian"], f"{what} jacobian"
        )


@pytest.mark.aoti
def test_compiled_composed_j2_takes_its_solver_settings(compiled_j2: Path, tmp_path: Path) -> None:
    """ImplicitUpdate's Newton in the compiled graphs reads its run-time settings: max_its 1
    fails steps that converge with the compiled 17, and looser tolerances give what the
    eager model built with them gives (no recompile)."""
    compiled = load_model(compiled_j2, "model")
    compiled_values = {"abs_tol": 1e-14, "rel_tol": 1e-13, "max_its": 17}
    assert compiled.solver_settings == {"newton": compiled_values}
    torch.manual_seed(11)
    x = {
        "strain": torch.randn(5, 6, dtype=torch.float64) * 2e-3,
        "plastic_strain~1": torch.zeros(5, 6, dtype=torch.float64),
        "equivalent_plastic_strain~1": torch.zeros(5, dtype=torch.float64),
        "t": torch.ones(5, dtype=torch.float64),
        "t~1": torch.zeros(5, dtype=torch.float64),
    }
    text = (FIXTURES / "j2_composed" / "model.i").read_text()
    eager = build_model(model_section(hit.parse(text, "j2.i"), "model"))
    default = compiled.forward(x)
    torch.testing.assert_close(default, eager.forward(x), rtol=1e-9, atol=1e-9)

    compiled.set_solver_settings("newton", max_its=1)
    with pytest.raises(ConvergenceError):
        compiled.forward(x)
    with pytest.raises(ConvergenceError):
        compiled.jacobian(x)

    loose = {"abs_tol": 1e-6, "rel_tol": 1e-3}
    compiled.set_solver_settings("newton", max_its=17, **loose)
    for key, value in loose.items():
        text = text.replace(f"{key} = {compiled_values[key]:g}\n", f"{key} = {value:g}\n")
    looser = build_model(model_section(hit.parse(text, "j2_loose.i"), "model"))
    assert looser.solver_settings == {"newton": {**compiled_values, **loose}}
    got = compiled.forward(x)
    torch.testing.assert_close(got, looser.forward(x), rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(compiled.jacobian(x), looser.jacobian(x), rtol=1e-9, atol=1e-9)
    assert (got["stress"] - default["stress"]).abs().max() > 1e-6
