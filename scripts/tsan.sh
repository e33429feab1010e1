#!/usr/bin/env bash
# Builds the thread tests with ThreadSanitizer in build-tsan/ and runs them.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash scripts/setup.sh

jobs="${DYNET_LITE_JOBS:-2}"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDYNET_LITE_SANITIZE=thread \
  -DDYNET_LITE_BUILD_EXAMPLES=OFF -DDYNET_LITE_BUILD_BENCH=OFF
cmake --build build-tsan --target test_threads -j"$jobs"
# halt_on_error: a data race fails the run instead of only printing a report.
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
  build-tsan/tests/test_threads --log_level=test_suite --report_level=short
