#!/usr/bin/env bash
# Builds DyNet 2.1.2's own C++ unit tests against dynet_lite, changing nothing
# in them but the include prefix (<dynet/x.h> -> <dynet_lite/x.h>, followed by
# `namespace dynet = dynet_lite;`), runs them and prints, per program, how many
# test cases pass.  The tests come from DyNet's source release, which
# scripts/build_dynet.sh fetches into .deps/src.
#
#   scripts/dynet_unit_tests.sh [BUILD_DIR]    # BUILD_DIR: a built dynet_lite tree (default: build)
#
# A program that does not compile is reported as such, with its first errors.
# The cases that fail by design are listed in the README ("Differences from DyNet").
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
src="$root/.deps/src/dyNET-2.1.2/tests"
work="$build/dynet-own-tests"
if [ ! -f "$src/test-nodes.cc" ]; then
  echo "DyNet's tests are not in $src: run scripts/build_dynet.sh first" >&2
  exit 2
fi
rm -rf "$work"
mkdir -p "$work/src" "$work/run"
cmake --install "$build" --prefix "$work/prefix" >/dev/null || exit 1

# The include prefix, and the alias after the last DyNet include of each file.
for f in "$src"/test-*.cc "$src"/test.h; do
  python3 - "$f" "$work/src/$(basename "$f")" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
text = re.sub(r'#include <dynet/([^>]+)>', r'#include <dynet_lite/\1>', text)
lines = text.split('\n')
last = max((i for i, l in enumerate(lines) if l.startswith('#include <dynet_lite/')), default=None)
if last is not None:
    lines.insert(last + 1, 'namespace dynet = dynet_lite;')
open(sys.argv[2], 'w').write('\n'.join(lines))
PY
done

cmake -S "$root/tests/dynet_own" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DDYNET_TESTS_DIR="$work/src" >/dev/null || exit 1
cmake --build "$work/build" -j"$(nproc)" -- -k >"$work/build.log" 2>&1

total=0
passed=0
printf '%-18s %s\n' program result
for cc in "$work"/src/test-*.cc; do
  name="$(basename "$cc" .cc)"
  [ "$name" = test-serialize ] && continue
  exe="$work/build/$name"
  if [ ! -x "$exe" ]; then
    printf '%-18s %s\n' "$name" "does not compile:"
    grep -m 3 "$name.cc.*error" "$work/build.log" | sed 's/^/    /'
    continue
  fi
  # Some tests write files into the working directory.
  (cd "$work/run" && "$exe" --report_level=detailed >"$work/run/$name.log" 2>&1)
  p="$(grep -m 1 -oE '[0-9]+ test cases? out of [0-9]+ passed' "$work/run/$name.log" | awk '{print $1}')"
  n="$(grep -m 1 -oE 'out of [0-9]+' "$work/run/$name.log" | awk '{print $3}')"
  total=$((total + ${n:-0}))
  passed=$((passed + ${p:-0}))
  s="$(grep -m 1 -oE '[0-9]+ test cases? out of [0-9]+ skipped' "$work/run/$name.log" | awk '{print $1}')"
  printf '%-18s %s%s\n' "$name" "${p:-0} of ${n:-?} cases pass" "${s:+ ($s disabled by DyNet)}"
  grep -E 'error: in "|fatal error: in "' "$work/run/$name.log" | sed -E 's/.*in "([^"]+)".*/    fails: \1/' | sort -u
done
echo "all: $passed of $total cases pass (logs in $work/run)"
