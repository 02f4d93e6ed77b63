#!/usr/bin/env bash
# The GPU run behind doc/performance.md, in one call on a machine with a CUDA GPU: builds the
# tests and benchmarks for cpu and cuda, compiles the test fixtures and the benchmark
# viscoplastic model, then runs the CUDA tests, the AOTI tests (every policy on cpu and
# cuda), P1-P4 three times, and AdaptiveHybrid against the best static configuration on the
# elastic and the viscoplastic model. Every result lands in OUT_DIR as it is made, so a run
# cut short keeps what it finished.
#
#   bench/gpu_validation.sh OUT_DIR [PYTHON]
#
# Environment: BUILD (default build-gpu in the source tree), NEML2_CMAKE_ARGS (extra configure
# arguments, e.g. -DCMAKE_PREFIX_PATH=... for nlohmann-json), I18NPATH (locale sources, for a
# machine without the de_DE locale that the locale tests need: it is generated with localedef),
# ADAPTIVE_SECONDS (time limit of each AdaptiveHybrid comparison, default 250), SKIP_ADAPTIVE
# (set: stop before the AdaptiveHybrid comparisons, for a machine lent in short slots),
# ONLY_BUILD (set: stop once the fixtures are compiled and the build is done; a second call
# without it finds both in place and goes straight to the runs), SKIP_FIXTURES (fixture names
# not to compile here, default j2_composed: e.g. "j2_composed crystal" where the crystal
# compile runs on its own, detached, so that it outlives a ten-minute call).
set -uo pipefail
out=${1:?usage: bench/gpu_validation.sh OUT_DIR [PYTHON]}
py=${2:-python3}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build-gpu}
art=$build/tests/artifacts
mkdir -p "$out" "$art"
export PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
log() { echo "[+${SECONDS}s] $*"; }

# The fixtures the cuda and aoti tests read (all but j2_composed, which takes minutes, and
# those SKIP_FIXTURES names) and the benchmark model, compiled beside the build.
skip=" ${SKIP_FIXTURES:-j2_composed} "
for dir in "$root"/tests/aoti/*/; do
  name=$(basename "$dir")
  [[ $skip == *" $name "* || -f $art/$name/model_aoti.i ]] && continue
  flags="-d :"
  [[ -f $dir/flags.txt ]] && flags=$(head -1 "$dir/flags.txt")
  # shellcheck disable=SC2086
  "$py" -m neml2.compile "$dir/model.i" --model model --device cpu cuda $flags -j 3 \
    -o "$art/$name" > "$out/compile_$name.log" 2>&1 &
done
[[ -f $art/bench_viscoplastic/model_aoti.i ]] ||
  "$py" -m neml2.compile "$root/bench/models/viscoplastic.i" --model model --device cpu cuda \
    -j 2 -o "$art/bench_viscoplastic" > "$out/compile_bench_viscoplastic.log" 2>&1 &

# shellcheck disable=SC2086
cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DPython_EXECUTABLE="$(command -v "$py")" "-DNEML2_TEST_DEVICES=cpu;cuda" -DNEML2_MPI=OFF \
  -DNEML2_BENCHMARKS=ON -DNEML2_EXAMPLES=OFF ${NEML2_CMAKE_ARGS:-} > "$out/cmake.log" 2>&1 ||
  { log "configure failed"; tail -30 "$out/cmake.log"; exit 1; }
ninja -C "$build" -j 8 neml2_cuda_tests neml2_aoti_tests neml2_bench_dispatch_throughput \
  neml2_bench_adaptive_vs_static neml2_bench_idle_teams neml2_bench_caller_team > "$out/build.log" 2>&1 ||
  { log "build failed"; grep -A8 'error' "$out/build.log" | head -60; exit 1; }
log "built"
if [[ -n ${I18NPATH:-} ]]; then
  mkdir -p "$build/tests/locale"
  localedef -i de_DE -f UTF-8 "$build/tests/locale/de_DE.UTF-8" > "$out/locale.log" 2>&1
fi
wait
log "compiled"
for f in "$out"/compile_*.log; do echo "$(basename "$f"): $(tail -1 "$f")"; done
[[ -n ${ONLY_BUILD:-} ]] && { log "stopped after the build (ONLY_BUILD)"; exit 0; }

timeout 120 "$build/tests/neml2_cuda_tests" > "$out/cuda_tests.txt" 2>&1
log "cuda tests: exit $?"; tail -5 "$out/cuda_tests.txt"
timeout 180 "$build/tests/neml2_aoti_tests" "~[j2]" > "$out/aoti_tests.txt" 2>&1
log "aoti tests: exit $?"; tail -5 "$out/aoti_tests.txt"
timeout 60 "$build/bench/idle_teams" "$art/forward_single/model_aoti.i" 16384 cpu,cuda:0 \
  > "$out/idle_teams.txt" 2>&1
log "idle teams: exit $?"; cat "$out/idle_teams.txt"
for k in 1 2 3; do
  timeout 90 "$build/bench/dispatch_throughput" "$art/forward_single/model_aoti.i" 4194304 \
    "$out/p14_$k.json" > "$out/p14_$k.txt" 2>&1
  log "P1-P4 run $k: exit $?"
done
cat "$out/p14_1.txt"
[[ -n ${SKIP_ADAPTIVE:-} ]] && { log "AdaptiveHybrid comparisons skipped (SKIP_ADAPTIVE)"; exit 0; }
limit=${ADAPTIVE_SECONDS:-250}
timeout "$limit" "$build/bench/adaptive_vs_static" "$art/forward_single/model_aoti.i" \
  --devices cpu,cuda:0 --batches 16384,65536,262144,1048576,4194304,16777216 --repeat 5 \
  --json "$out/avs_elastic.json" > "$out/avs_elastic.txt" 2>&1
log "adaptive, elastic: exit $?"; cat "$out/avs_elastic.txt"
timeout "$limit" "$build/bench/adaptive_vs_static" "$art/bench_viscoplastic/model_aoti.i" \
  --devices cpu,cuda:0 --batches 16384,65536,262144,1048576,4194304 --repeat 5 \
  --json "$out/avs_viscoplastic.json" > "$out/avs_viscoplastic.txt" 2>&1
log "adaptive, viscoplastic: exit $?"; cat "$out/avs_viscoplastic.txt"
timeout "$limit" "$build/bench/adaptive_vs_static" "$art/crystal/model_aoti.i" \
  --devices cpu,cuda:0 --batches 2048,8192 --repeat 2 --range 1e-3 \
  --json "$out/avs_crystal.json" > "$out/avs_crystal.txt" 2>&1
log "adaptive, crystal: exit $?"; cat "$out/avs_crystal.txt"
