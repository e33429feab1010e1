#!/usr/bin/env bash
# Creates (once) the Python virtual environment the ONNX checks run in, with
# ONNX Runtime, onnx and NumPy from PyPI; nothing goes into the system Python.
#   scripts/venv.sh [DIR]     (default: build/venv)
# Safe to run again: an environment that already imports them is kept.
set -euo pipefail

dir=${1:-build/venv}
if [ -x "$dir/bin/python" ] && "$dir/bin/python" -c "import onnxruntime, onnx, numpy" 2>/dev/null; then
  exit 0
fi
python3 -m venv "$dir"
"$dir/bin/python" -m pip install --quiet --disable-pip-version-check "onnxruntime>=1.16" "onnx>=1.14" numpy
"$dir/bin/python" -c "import onnxruntime, onnx; print('venv.sh: onnxruntime', onnxruntime.__version__, 'onnx', onnx.__version__)"
