#!/usr/bin/env bash
# The single-crystal plasticity model on a machine with a CUDA GPU, in two calls that each fit a
# ten-minute slot: `build` compiles tests/aoti/crystal/model.i for cpu and cuda
# (forward only, both devices at once) while it builds the AOTI tests and the AdaptiveHybrid
# benchmark; `run` checks every policy on cpu and cuda against one direct call
# (tests/aoti/test_crystal.cpp) and times CPU alone, GPU alone, StaticHybrid and AdaptiveHybrid
# (bench/adaptive_vs_static.cpp). Results land in OUT_DIR as they are made.
#
#   bench/gpu_crystal.sh build|run OUT_DIR [PYTHON]
#
# Environment: BUILD (default build-gpu in the source tree), NEML2_CMAKE_ARGS (extra configure
# arguments, e.g. -DCMAKE_PREFIX_PATH=... for nlohmann-json), BATCHES (the benchmark's batch
# sizes, default 2048,8192: a 16-core CPU solves a few thousand crystal points a second),
# REPEAT (timed calls per configuration, default 2).
set -uo pipefail
step=${1:?usage: bench/gpu_crystal.sh build|run OUT_DIR [PYTHON]}
out=${2:?usage: bench/gpu_crystal.sh build|run OUT_DIR [PYTHON]}
py=${3:-python3}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build-gpu}
art=$build/tests/artifacts
mkdir -p "$out" "$art"
export PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
log() { echo "[+${SECONDS}s] $*"; }

case $step in
  build)
    # shellcheck disable=SC2046
    "$py" -m neml2.compile "$root/tests/aoti/crystal/model.i" --model model --device cpu cuda \
      $(head -1 "$root/tests/aoti/crystal/flags.txt") -j 2 -o "$art/crystal" \
      > "$out/compile_crystal.log" 2>&1 &
    # shellcheck disable=SC2086
    cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
      -DPython_EXECUTABLE="$(command -v "$py")" "-DNEML2_TEST_DEVICES=cpu;cuda" -DNEML2_MPI=OFF \
      -DNEML2_BENCHMARKS=ON -DNEML2_EXAMPLES=OFF ${NEML2_CMAKE_ARGS:-} > "$out/cmake.log" 2>&1 ||
      { log "configure failed"; tail -30 "$out/cmake.log"; exit 1; }
    ninja -C "$build" -j 12 neml2_aoti_tests neml2_bench_adaptive_vs_static > "$out/build.log" 2>&1 ||
      { log "build failed"; grep -A8 'error' "$out/build.log" | head -60; exit 1; }
    log "built"
    wait
    log "compiled: $(tail -1 "$out/compile_crystal.log")"
    ;;
  run)
    timeout 150 "$build/tests/neml2_aoti_tests" "[crystal]" > "$out/aoti_crystal.txt" 2>&1
    log "crystal tests: exit $?"; tail -4 "$out/aoti_crystal.txt"
    timeout 420 "$build/bench/adaptive_vs_static" "$art/crystal/model_aoti.i" \
      --devices cpu,cuda:0 --batches "${BATCHES:-2048,8192}" \
      --repeat "${REPEAT:-2}" --range 1e-3 --json "$out/avs_crystal.json" > "$out/avs_crystal.txt" 2>&1
    log "adaptive, crystal: exit $?"; cat "$out/avs_crystal.txt"
    ;;
  *)
    echo "usage: bench/gpu_crystal.sh build|run OUT_DIR [PYTHON]" >&2
    exit 2
    ;;
esac
