#!/usr/bin/env bash
# The AdaptiveHybrid rows of doc/performance.md on one machine, CPU + the first GPU when
# torch sees one: compiles the elastic and the viscoplastic model (forward graph only),
# builds the two benchmarks, sweeps batch sizes per device (tune_hybrid) and compares
# AdaptiveHybrid with the best StaticHybrid and the sum of each device alone.
#
#   bench/adaptive_gpu.sh prepare|run|all OUT_DIR [PYTHON]
#
# prepare: artifacts and benchmarks under $BUILD (default: build-adaptive in the source
# tree); run: the measurements, into OUT_DIR (tables as .txt, data as .csv/.json).
# BATCHES, MAX_LOG2, POINTS and REPEAT override the sizes of the run.
set -euo pipefail
stage=${1:?usage: bench/adaptive_gpu.sh prepare|run|all OUT_DIR [PYTHON]}
out=${2:?usage: bench/adaptive_gpu.sh prepare|run|all OUT_DIR [PYTHON]}
py=${3:-python3}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build-adaptive}
art=$build/artifacts
models="forward_single viscoplastic"
mkdir -p "$out" "$art"

# The elastic model of the tests; the viscoplastic one with a production iteration cap.
model_file()
{
  if [[ -f $root/bench/models/$1.i ]]; then
    echo "$root/bench/models/$1.i"
  else
    echo "$root/tests/aoti/$1/model.i"
  fi
}

if "$py" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
  compile_devices=(cpu cuda)
  devices=cpu,cuda:0
else
  compile_devices=(cpu)
  devices=cpu
fi

if [[ $stage == prepare || $stage == all ]]; then
  for m in $models; do
    [[ -f $art/$m/model_aoti.i ]] ||
      PYTHONPATH=$root/python "$py" -m neml2.compile "$(model_file "$m")" \
        --model model --device "${compile_devices[@]}" -o "$art/$m" > "$out/compile_$m.log" 2>&1 &
  done
  cmake -G Ninja -S "$root" -B "$build" -DPython_EXECUTABLE="$(command -v "$py")" \
    -DCMAKE_BUILD_TYPE=Release -DNEML2_TESTS=OFF -DNEML2_EXAMPLES=OFF \
    -DNEML2_BENCHMARKS=ON > "$out/cmake.log" 2>&1
  ninja -C "$build" neml2_bench_tune_hybrid neml2_bench_adaptive_vs_static > "$out/build.log" 2>&1
  wait
fi

if [[ $stage == run || $stage == all ]]; then
  for m in $models; do
    "$build/bench/tune_hybrid" "$art/$m/model_aoti.i" --devices "$devices" --min-log2 10 \
      --max-log2 "${MAX_LOG2:-22}" --points "${POINTS:-4194304}" --repeat "${REPEAT:-5}" \
      --csv "$out/tune_$m.csv" \
      --json "$out/tune_$m.json" | tee "$out/tune_$m.txt"
    "$build/bench/adaptive_vs_static" "$art/$m/model_aoti.i" --devices "$devices" \
      --batches "${BATCHES:-16384,65536,262144,1048576,4194304,16777216}" --repeat "${REPEAT:-7}" \
      --json "$out/avs_$m.json" |
      tee "$out/avs_$m.txt"
  done
fi
