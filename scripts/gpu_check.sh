#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: the GPU test suite, compute-sanitizer's memory
# check of it (when installed), every benchmark task on the GPU, then compiled
# programs (CUDA graphs), with slots and by structure, against rebuilt graphs
# (bench/compiled.py --structure).
#
#   scripts/gpu_check.sh [BUILD_DIR] [DATA_DIR]
#
# BUILD_DIR (default build-gpu) is configured and built here unless it already
# holds tests/test_cuda; DATA_DIR (default ../shared/data) holds the corpora.
# Set RUNS (default 3) and TASKS (default all) for the benchmarks, BENCH=0 to
# skip them.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build="${1:-build-gpu}"
data="${2:-}"

if [ ! -x "$build/tests/test_cuda" ]; then
  # Hopper (sm_90) and Ampere (sm_80) unless CMAKE_CUDA_ARCHITECTURES is set.
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release ${CUDA_ARCHS:+-DCMAKE_CUDA_ARCHITECTURES=$CUDA_ARCHS} || exit
  cmake --build "$build" -j"${DYNET_LITE_JOBS:-$(nproc)}" || exit
fi

if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "gpu_check.sh: no NVIDIA driver here (nvidia-smi not found); the GPU suite needs a GPU" >&2
  exit 1
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || exit
"$build/tests/test_cuda" --report_level=short
rc=$?
echo "test_cuda: exit $rc"
if command -v compute-sanitizer >/dev/null 2>&1; then
  compute-sanitizer --tool memcheck "$build/tests/test_cuda" --run_test=gpu_vs_cpu --report_level=short 2>&1 | tail -8
fi
[ "$rc" -eq 0 ] || exit "$rc"
[ "${BENCH:-1}" = 0 ] && exit 0
python3 bench/run_all.py --build "$build" --no-build --gpu --runs "${RUNS:-3}" \
  --tasks "${TASKS:-tagger,tagger-char,treelstm,rnnlm,overhead}" ${data:+--data-dir "$data"} || exit
# Compiled programs (CUDA graphs) against rebuilt graphs, in the same rounds.
python3 bench/compiled.py --build "$build" --gpu --structure --runs "${RUNS:-3}" ${data:+--data-dir "$data"}
