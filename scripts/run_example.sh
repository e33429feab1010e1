#!/usr/bin/env bash
# Installs what is missing, builds (Release, with ccache when present) and runs
# the main example, the tagger, on the data shipped in ../shared/data.  Extra
# arguments go to the tagger.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/configure.sh"

if [ ! -d ../shared/data ]; then
  echo "run_example.sh: note: no data in $(cd .. && pwd)/shared/data" >&2
fi
# The tagger finds ../shared/data by itself.
cmake --build build --target tagger -j"$jobs"
exec build/examples/tagger "$@"
