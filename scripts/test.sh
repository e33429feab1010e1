#!/usr/bin/env bash
# Installs what is missing, builds everything (library, tests, examples,
# benchmarks) in build/ and runs the whole test suite.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash scripts/setup.sh

jobs="${DYNET_LITE_JOBS:-2}"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$jobs"
cd build
ctest --output-on-failure -j2
