#!/usr/bin/env bash
# Sets up a Debian/Ubuntu machine for neml2 (system packages, a Python venv with
# torch), builds it with CMake, then runs the demo or the whole test suite.
#
# Usage: bash scripts/setup.sh demo | test | build
#   demo   compile tests/aoti/forward_single/model.i and run build/examples/demo on it
#   test   run every test with ctest (unit, aoti, mpi, cuda, python)
#   build  stop after the build
#
# Each step is skipped when what it makes is already there, so re-running is cheap.
#
# Environment:
#   NEML2_BUILD_DIR   build folder (default: build)
#   NEML2_VENV        virtual environment to create and use (default: .venv)
#   NEML2_PYTHON      use this Python, which already has torch (and pytest for the
#                     tests), instead of a venv; nothing is installed into it
#   NEML2_CMAKE_ARGS  extra CMake configure arguments, split on spaces
#                     (e.g. "-DNEML2_TEST_DEVICES=cpu;cuda -DNEML2_WERROR=ON")
#   NEML2_JOBS        parallel build and test jobs (default: 2)
#   NEML2_SKIP_APT=1  never install system packages
set -euo pipefail

usage()
{
  sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
}

log()
{
  printf '==> %s\n' "$*"
}

die()
{
  printf 'setup.sh: %s\n' "$*" >&2
  exit 1
}

action=${1:-}
case $action in
  demo | test | build) ;;
  -h | --help)
    usage
    exit 0
    ;;
  *)
    usage >&2
    exit 2
    ;;
esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

build_dir=${NEML2_BUILD_DIR:-build}
venv=${NEML2_VENV:-.venv}
jobs=${NEML2_JOBS:-2}
# CMake and the demo need absolute paths: they run from other folders.
[[ $venv == /* ]] || venv=$root/$venv

# ---------------------------------------------------------------------------
# (a) System packages
# ---------------------------------------------------------------------------
# Is what a package provides already here, installed some other way (a newer
# CMake, a Catch2 built from source, a Python from pyenv)? Then it is not needed.
provided()
{
  case $1 in
    catch2) [[ -d /usr/include/catch2 || -d /usr/local/include/catch2 ]] ;;
    locales) [[ -f /usr/share/i18n/locales/de_DE ]] ;;
    nlohmann-json3-dev) [[ -f /usr/include/nlohmann/json.hpp || -f /usr/local/include/nlohmann/json.hpp ]] ;;
    ninja-build) command -v ninja > /dev/null ;;
    libopenmpi-dev) command -v mpicxx > /dev/null ;;
    openmpi-bin) command -v mpiexec > /dev/null ;;
    clang) command -v clang++ > /dev/null ;;
    libclang-rt-dev) compgen -G '/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a' > /dev/null ;;
    python3-venv) python3 -c 'import ensurepip, venv' > /dev/null 2>&1 ;;
    python3-dev)
      python3 -c 'import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
        > /dev/null 2>&1
      ;;
    *) command -v "$1" > /dev/null ;;
  esac
}

install_system_packages()
{
  # What building the library and its programs needs; the demo needs no more.
  local wanted=(cmake ninja-build g++ catch2 nlohmann-json3-dev)
  # The tests also need a comma-decimal locale, MPI, the docs and the linters; clang
  # and libclang-rt-dev (its sanitizer and libFuzzer runtimes) are scripts/sanitize.sh's.
  [[ $action == demo ]] || wanted+=(locales libopenmpi-dev openmpi-bin doxygen clang-format
    clang-tidy clang libclang-rt-dev)
  # A venv needs ensurepip; torch's AOT compiler needs the Python headers.
  [[ -n ${NEML2_PYTHON:-} ]] || wanted+=(python3-venv python3-dev)

  local missing=() pkg
  for pkg in "${wanted[@]}"; do
    if ! dpkg -s "$pkg" > /dev/null 2>&1 && ! provided "$pkg"; then
      missing+=("$pkg")
    fi
  done
  if ((${#missing[@]} == 0)); then
    log "system packages: all present"
    return
  fi
  if [[ ${NEML2_SKIP_APT:-} == 1 ]]; then
    log "system packages missing but NEML2_SKIP_APT=1: ${missing[*]}"
    return
  fi
  command -v apt-get > /dev/null || die "missing ${missing[*]} and no apt-get to install them"
  local sudo=()
  [[ $(id -u) == 0 ]] || sudo=(sudo)
  log "installing system packages: ${missing[*]}"
  # A machine without a package mirror can still build if what is missing is
  # only a developer tool (doxygen, clang-tidy): CMake will name anything required.
  if ! { "${sudo[@]}" apt-get update -q \
    && "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -q --no-install-recommends "${missing[@]}"; }; then
    log "warning: could not install ${missing[*]}; continuing without them"
  fi
}

install_system_packages

# ---------------------------------------------------------------------------
# (b) Python: a venv with the pinned requirements and neml2 installed editable,
#     or the interpreter named by NEML2_PYTHON as it is
# ---------------------------------------------------------------------------
# Exit 0 when every "name==version" pin of the requirements file is installed
# (torch's local suffix such as +cpu aside).
requirements_met()
{
  "$1" - "$2" << 'EOF'
import sys
from importlib.metadata import PackageNotFoundError, version

for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, _, want = line.partition("==")
    try:
        have = version(name.strip())
    except PackageNotFoundError:
        sys.exit(1)
    if want and have.split("+")[0] != want.strip():
        sys.exit(1)
EOF
}

if [[ -n ${NEML2_PYTHON:-} ]]; then
  py=$NEML2_PYTHON
  [[ -x $py ]] || py=$(command -v "$py") || die "NEML2_PYTHON=$NEML2_PYTHON is not a program"
  "$py" -c 'import torch' 2> /dev/null || die "NEML2_PYTHON=$py cannot import torch"
  "$py" -c 'import pytest' 2> /dev/null || log "warning: $py has no pytest; the python test will fail"
  log "python: $py (torch $("$py" -c 'import torch; print(torch.__version__)'))"
else
  py=$venv/bin/python
  if [[ ! -x $py ]]; then
    log "creating venv $venv"
    python3 -m venv "$venv"
  fi
  if requirements_met "$py" python/requirements.txt; then
    log "python requirements: already installed"
  else
    log "installing python/requirements.txt into $venv"
    "$py" -m pip install -q -r python/requirements.txt
  fi
  # Editable install, redone only when pyproject.toml changed since the last one.
  if [[ -f python/pyproject.toml ]]; then
    stamp=$venv/.neml2-pyproject.sha256
    want=$(sha256sum python/pyproject.toml | cut -d' ' -f1)
    if [[ -f $stamp && $(cat "$stamp") == "$want" ]] \
      && (cd / && "$py" -c 'import neml2') 2> /dev/null; then
      log "neml2 python package: already installed (editable)"
    else
      log "pip install -e python"
      "$py" -m pip install -q -e python
      echo "$want" > "$stamp"
    fi
  else
    log "python/pyproject.toml not found: neml2 python package not installed"
  fi
fi
# Make it absolute without resolving the venv's symlink to the base interpreter.
[[ $py == /* ]] || py=$root/$py

# ---------------------------------------------------------------------------
# (b2) Optional: NEML2 3.1.0 from PyPI in a venv of its own (.venv-neml2), the
#      reference python/tests/test_neml2_oracle.py compares the models against.
#      PyPI's package is also called neml2, so it cannot share the main venv.
#      Its wheels are cp311 only; a failure never fails the setup (the test then
#      skips and says why). NEML2_SKIP_ORACLE=1 skips this step; only the tests
#      need it, so demo and build skip it too.
# ---------------------------------------------------------------------------
oracle=$root/.venv-neml2
if [[ $action == test && ${NEML2_SKIP_ORACLE:-} != 1 && ! -x $oracle/bin/python ]]; then
  if command -v python3.11 > /dev/null; then
    log "creating the NEML2 oracle venv $oracle (neml2==3.1.0, torch==2.13.0)"
    if ! { python3.11 -m venv "$oracle" &&
      "$oracle/bin/python" -m pip install -q torch==2.13.0 neml2==3.1.0; }; then
      log "NEML2 3.1.0 could not be installed; test_neml2_oracle will skip"
      rm -rf "$oracle"
    fi
  else
    log "no python3.11: NEML2 3.1.0 (cp311 wheels) not installed; test_neml2_oracle will skip"
  fi
fi

# ---------------------------------------------------------------------------
# (c) Configure and build
# ---------------------------------------------------------------------------
cmake_args=(-S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "-DPython_EXECUTABLE=$py")
# The generator of an existing build folder cannot change.
if [[ ! -f $build_dir/CMakeCache.txt ]] && command -v ninja > /dev/null; then
  cmake_args+=(-G Ninja)
fi
if command -v mpicxx > /dev/null; then
  cmake_args+=(-DNEML2_MPI=ON)
fi
if [[ -n ${NEML2_CMAKE_ARGS:-} ]]; then
  read -r -a extra <<< "$NEML2_CMAKE_ARGS"
  cmake_args+=("${extra[@]}")
fi
log "cmake ${cmake_args[*]}"
cmake "${cmake_args[@]}"
# The demo needs one program; build and test need everything.
targets=()
if [[ $action == demo ]]; then
  targets=(--target neml2_example_demo)
fi
log "building ${targets[*]:-everything} with $jobs jobs"
cmake --build "$build_dir" -j "$jobs" "${targets[@]}"

# ---------------------------------------------------------------------------
# (d) The action
# ---------------------------------------------------------------------------
case $action in
  build) ;;
  demo)
    model=tests/aoti/forward_single/model.i
    out=$build_dir/demo/aoti
    stub=$out/model_aoti.i
    [[ -f $model ]] || die "$model not found"
    if [[ -f $stub && $stub -nt $model ]]; then
      log "artifacts: $stub is up to date"
    else
      if [[ -z ${NEML2_PYTHON:-} && -x $venv/bin/neml2-compile ]]; then
        compile=("$venv/bin/neml2-compile")
      else
        compile=(env "PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}" "$py" -m neml2.compile)
      fi
      log "compiling $model into $out"
      "${compile[@]}" "$model" --model model --device cpu -d : -o "$out"
    fi
    demo=$build_dir/examples/demo
    [[ -x $demo ]] || die "$demo was not built (examples/demo.cpp missing?)"
    log "$demo $stub"
    "$demo" "$stub"
    ;;
  test)
    # --no-tests=error: an empty suite is a failure, not a pass.
    ctest --test-dir "$build_dir" --output-on-failure --no-tests=error -j "$jobs"
    ;;
esac
