#!/usr/bin/env bash
# Runs the GPU-vs-CPU suite of test_cuda.  Without a usable GPU its cases are
# skipped by Boost.Test; this script then exits 77 so that ctest reports the
# test as "Skipped" (never as passed).
set -u
out=$("$1" --run_test=gpu_vs_cpu --log_level=test_suite --report_level=short 2>&1)
rc=$?
echo "$out"
if [ $rc -eq 0 ] && echo "$out" | grep -q "needs a GPU"; then
  echo "SKIPPED: no GPU on this machine"
  exit 77
fi
exit $rc
