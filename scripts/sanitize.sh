#!/usr/bin/env bash
# Builds the C++ tests under sanitizers and runs them, or runs the fuzz targets. The
# tests read the artifacts that `bash scripts/setup.sh test` compiled into the main
# build, so run that first; models are never recompiled here.
#
# Usage: bash scripts/sanitize.sh asan | tsan | fuzz
#   asan   ASan + UBSan build of the C++ test programs (build-asan): ctest labels unit, aoti,
#          soak (NEML2_SOAK_DISPATCHES, 2000 here) and cuda (when torch sees a GPU)
#   tsan   TSan build of the same programs (build-tsan), the same labels; of tests/aoti only
#          the sources that exercise threads (NEML2_AOTI_TESTS below)
#   The mpi label is not run: OpenMPI is not instrumented, keeps its memory until exit and
#   talks through shared memory that TSan cannot follow.
#   fuzz   libFuzzer targets (build-fuzz), each run NEML2_FUZZ_SECONDS from tests/fuzz/corpus
#
# Every build uses Clang (its sanitizers and libFuzzer come with Debian's clang and
# libclang-rt-dev packages) and only the test targets. LibTorch is not instrumented;
# tests/sanitizers/*.supp hold the suppressions for its internals, one comment each.
#
# Environment:
#   NEML2_BUILD_DIR      the main build whose tests/artifacts are reused (default: build)
#   NEML2_VENV, NEML2_PYTHON   the Python that has torch, as for setup.sh
#   NEML2_JOBS           parallel build jobs (default: 2)
#   NEML2_FUZZ_SECONDS   seconds per fuzz target (default: 30)
#   NEML2_CLANGXX        the clang++ to use (default: clang++, else the newest clang++-N)
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
  printf 'sanitize.sh: %s\n' "$*" >&2
  exit 1
}

action=${1:-}
case $action in
  asan | tsan | fuzz) ;;
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
main_build=${NEML2_BUILD_DIR:-build}
[[ $main_build == /* ]] || main_build=$root/$main_build
jobs=${NEML2_JOBS:-2}
artifacts=$main_build/tests/artifacts
supp=$root/tests/sanitizers

# The Python whose torch the main build used.
if [[ -n ${NEML2_PYTHON:-} ]]; then
  py=$NEML2_PYTHON
  [[ -x $py ]] || py=$(command -v "$py") || die "NEML2_PYTHON=$NEML2_PYTHON is not a program"
else
  venv=${NEML2_VENV:-.venv}
  [[ $venv == /* ]] || venv=$root/$venv
  py=$venv/bin/python
fi
"$py" -c 'import torch' 2> /dev/null || die "$py cannot import torch: run bash scripts/setup.sh test first"

clangxx=${NEML2_CLANGXX:-}
if [[ -z $clangxx ]]; then
  clangxx=$(command -v clang++ || ls /usr/bin/clang++-[0-9]* 2> /dev/null | sort -V | tail -n 1 || true)
fi
[[ -n $clangxx && -x $(command -v "$clangxx") ]] \
  || die "no clang++ found (Debian: apt-get install clang libclang-rt-dev), or set NEML2_CLANGXX"

configure_and_build()
{
  local dir=$1
  shift
  local targets=("$@")
  log "configure $dir ($*)"
  mkdir -p "$dir"
  # -O1, as the sanitizers' documentation advises: fast enough to run, and the two
  # instrumented builds compile in a fifth less time than at -O2 (debug lines come from
  # cmake/neml2Sanitize.cmake).
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -DNDEBUG" \
    "-DCMAKE_CXX_COMPILER=$clangxx" "-DPython_EXECUTABLE=$py" \
    -DNEML2_EXAMPLES=OFF -DNEML2_MPI=OFF -DNEML2_WERROR=OFF \
    "-DNEML2_TEST_ARTIFACTS_DIR=$artifacts" "${cmake_extra[@]}" > "$dir/configure.log" 2>&1 \
    || { cat "$dir/configure.log"; die "configuring $dir failed"; }
  log "build ${targets[*]} with $jobs jobs"
  cmake --build "$dir" -j "$jobs" --target "${targets[@]}"
}

start=$SECONDS
case $action in
  asan | tsan)
    [[ -d $artifacts ]] || die "no artifacts in $artifacts: run bash scripts/setup.sh test first"
    dir=$root/build-$action
    if [[ $action == asan ]]; then
      cmake_extra=(-DNEML2_SANITIZE=address,undefined)
      export ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1
      # use_tls=0: stale TLS entries of the dlclose'd graph libraries crash LeakSanitizer's
      # thread scan (see tests/sanitizers/lsan.supp).
      export LSAN_OPTIONS=use_tls=0:suppressions=$supp/lsan.supp:print_suppressions=0
      export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp
    else
      # TSan runs the AOTI tests that exercise threads (the policies' workers, faults in
      # flight, observers, the adaptive scheduler, results into reused buffers); the model
      # vocabulary tests run the same dispatch code single-threaded, under ASan and natively.
      cmake_extra=(-DNEML2_SANITIZE=thread
        "-DNEML2_AOTI_TESTS=test_dispatch;test_faults;test_observers;test_adaptive_dispatch;test_results_into;test_user_scheduler")
      # intercept_tls_get_addr=0: TSan's __tls_get_addr interceptor resets the shadow of a
      # library's dynamic TLS block from glibc's thread vector; the AOTI graphs' libraries
      # are dlopen'ed and dlclose'd per model, and a block of an unloaded one is stale, so
      # the interceptor segfaults in MemoryRangeSet when the next graph library initialises
      # its TLS (AOTInductorModelContainerCreateWithDevice). Without it TSan still sees
      # every access; only the reuse of those TLS blocks is not reset.
      export TSAN_OPTIONS=suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1:print_suppressions=0:intercept_tls_get_addr=0
    fi
    targets=(neml2_unit_tests neml2_aoti_tests neml2_soak_tests)
    labels='unit|aoti|soak'
    if "$py" -c 'import sys, torch; sys.exit(not torch.cuda.is_available())' 2> /dev/null; then
      targets+=(neml2_cuda_tests)
      labels+='|cuda'
    fi
    configure_and_build "$dir" "${targets[@]}"
    export NEML2_SOAK_DISPATCHES=${NEML2_SOAK_DISPATCHES:-2000}
    log "$action: ctest -L '$labels'"
    ctest --test-dir "$dir" --output-on-failure --no-tests=error -L "^($labels)\$"
    ;;
  fuzz)
    dir=$root/build-fuzz
    cmake_extra=(-DNEML2_FUZZ=ON -DNEML2_FUZZ_SECONDS="${NEML2_FUZZ_SECONDS:-30}")
    configure_and_build "$dir" neml2_fuzz_stub neml2_fuzz_meta neml2_fuzz_package
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    log "fuzz: ctest -L fuzz (${NEML2_FUZZ_SECONDS:-30} s per target)"
    ctest --test-dir "$dir" --output-on-failure --no-tests=error -L '^fuzz$'
    ;;
esac
log "$action: done in $((SECONDS - start)) s"
