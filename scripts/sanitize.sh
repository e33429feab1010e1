#!/usr/bin/env bash
# Builds the whole project with sanitizers and runs the whole ctest suite:
#   build-asan/  AddressSanitizer + UndefinedBehaviorSanitizer (with
#                float-cast-overflow, which -fsanitize=undefined leaves out in GCC);
#                arena memory is poisoned there (dynet_lite/core/arena.h);
#   build-tsan/  ThreadSanitizer.
# Every report is fatal (-fno-sanitize-recover=all, halt_on_error), so a report
# fails its test, and the script exits non-zero when any test fails or any log
# holds a report.
#
#   scripts/sanitize.sh            both builds
#   scripts/sanitize.sh asan       one of them (asan or tsan)
#
# Left out of both builds: the benchmarks (bench/, which ctest does not run), the
# CUDA backend (host sanitizers do not see device code), and the per-instruction-
# set kernel copies (DYNET_LITE_ISA_DISPATCH: the same sources again, tested by
# the plain build).  Left out of the TSan build: oneDNN, whose OpenMP runtime
# (libgomp) is not instrumented, so that TSan would report its own
# synchronisation as races; the products it would run use the built-in kernels.
# test_memory_resident is reported as Skipped in both (tests/CMakeLists.txt).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash scripts/setup.sh

jobs="${DYNET_LITE_JOBS:-2}"
builds=("$@")
[ ${#builds[@]} -eq 0 ] && builds=(asan tsan)

common=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g"
        -DDYNET_LITE_BUILD_BENCH=OFF -DDYNET_LITE_CUDA=OFF -DDYNET_LITE_ISA_DISPATCH=OFF)
reports='ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|WARNING: ThreadSanitizer|SUMMARY: (Address|Undefined|Thread)Sanitizer'
status=0

run_build() {  # name dir cmake-args...
  local name=$1 dir=$2
  shift 2
  echo "== sanitize.sh: $name in $dir"
  cmake -S . -B "$dir" "${common[@]}" "$@"
  nice -n 10 cmake --build "$dir" -j"$jobs"
  local log="$dir/sanitize-ctest.log" rc=0
  (cd "$dir" && ctest -j"$jobs" --output-on-failure --timeout 1800) >"$log" 2>&1 || rc=$?
  tail -n 40 "$log"
  if [ $rc -ne 0 ]; then
    echo "sanitize.sh: $name: ctest failed (exit $rc); see $log" >&2
    status=1
  fi
  if grep -Eq "$reports" "$log" "$dir"/Testing/Temporary/LastTest.log 2>/dev/null; then
    echo "sanitize.sh: $name: sanitizer reports in $log" >&2
    grep -E "$reports" "$log" "$dir"/Testing/Temporary/LastTest.log | head -20 >&2
    status=1
  fi
}

for b in "${builds[@]}"; do
  case "$b" in
    asan)
      ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1 ${ASAN_OPTIONS:-}" \
      UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1 ${UBSAN_OPTIONS:-}" \
        run_build "ASan+UBSan" build-asan "-DDYNET_LITE_SANITIZE=address;undefined;float-cast-overflow"
      ;;
    tsan)
      TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
        run_build "TSan" build-tsan -DDYNET_LITE_SANITIZE=thread -DDYNET_LITE_ONEDNN=OFF
      ;;
    *)
      echo "sanitize.sh: unknown build '$b' (asan or tsan)" >&2
      exit 2
      ;;
  esac
done
[ $status -eq 0 ] && echo "sanitize.sh: no failures, no reports"
exit $status
