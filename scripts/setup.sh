#!/usr/bin/env bash
# Installs the Debian packages dynet_lite needs to build and test, only the
# missing ones.  Safe to run again: it does nothing when everything is there.
set -euo pipefail

# libonnx-dev, libprotobuf-dev and protobuf-compiler: the ONNX exporter;
# python3-venv: the virtual environment of ONNX Runtime for its checks (scripts/venv.sh).
packages=(cmake g++ libeigen3-dev libboost-test-dev libcli11-dev ccache
          libonnx-dev libprotobuf-dev protobuf-compiler python3-venv)

missing=()
for p in "${packages[@]}"; do
  # dpkg -s also answers for removed packages that left their config behind.
  if ! dpkg -s "$p" 2>/dev/null | grep -q '^Status: install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup.sh: installing ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "setup.sh: need root (or sudo) to install: ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update
"${as_root[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
