#!/usr/bin/env bash
# Installs what is missing, builds everything (library, tests, examples,
# benchmarks) in build/ and runs the whole test suite.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/configure.sh"

cmake --build build -j"$jobs"
cd build
ctest --output-on-failure -j2
