#!/usr/bin/env bash
# Builds DyNet 2.1.2 (the C++ library, CPU/Eigen backend) from its source
# release on the Python package index (fetched with pip by name), with DyNet's
# own default Release flags (-Ofast -march=native -funroll-loops), and installs
# it under .deps/dynet-2.1.2 in the project root, where bench/CMakeLists.txt
# finds it to build bench/dynet_* (the DyNet side of `bench/run_all.py --dynet`).
# Only for benchmarks: the library, its tests and CI never need DyNet.  Takes
# about 20 minutes on two cores.
#
#   scripts/build_dynet.sh            # then: cmake -S . -B build-final ... && cmake --build build-final
#
# DyNet asks for a development snapshot of Eigen; Debian's Eigen 3.4
# (libeigen3-dev, already a dependency of dynet_lite) builds it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version=2.1.2
prefix="$root/.deps/dynet-$version"
work="$root/.deps/src"
sha256=c1c1de7cdd3a60b6c6491868b0e096b38b88d4ce14ef8bd065cb76bcd9f5a8b9

if [ -f "$prefix/lib/libdynet.so" ] && [ -f "$prefix/include/dynet/dynet.h" ]; then
  echo "DyNet $version is already installed in $prefix"
  exit 0
fi
need=()
for p in cmake g++ make; do command -v "$p" >/dev/null || need+=("$p"); done
command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
[ -f /usr/include/eigen3/Eigen/Core ] || need+=(libeigen3-dev)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update && $sudo apt-get install -y "${need[@]}"
fi
mkdir -p "$work"
cd "$work"
if [ ! -f "dyNET-$version.tar.gz" ]; then
  # The source release only (--no-binary for DyNet; pip prepares its metadata
  # with build tools it may take as wheels), checked against the hash below.
  python3 -m pip download --no-deps --no-binary dyNET "dyNET==$version" -d "$work"
fi
echo "$sha256  dyNET-$version.tar.gz" | sha256sum -c -
rm -rf "dyNET-$version"
tar xzf "dyNET-$version.tar.gz"
cmake -S "dyNET-$version" -B "dyNET-$version/build" -DCMAKE_BUILD_TYPE=Release \
  -DEIGEN3_INCLUDE_DIR=/usr/include/eigen3 -DENABLE_BOOST=OFF -DENABLE_CPP_EXAMPLES=OFF \
  -DCMAKE_INSTALL_PREFIX="$prefix" >/dev/null
# Eigen 3.4 prints thousands of warnings on DyNet's sources: the build's output
# goes to a log, shown (its end) only when the build fails.
log="$work/dynet-build.log"
echo "building DyNet $version (log: $log)"
if ! cmake --build "dyNET-$version/build" --target dynet -j"$(nproc)" >"$log" 2>&1; then
  grep -n -m 20 "error" "$log" || tail -n 50 "$log"
  echo "building DyNet failed; the whole log is $log" >&2
  exit 1
fi
cmake --install "dyNET-$version/build" >/dev/null
echo "DyNet $version installed in $prefix"
