# Sourced by run_example.sh and test.sh: goes to the project root, installs the
# missing packages (setup.sh) and configures build/ (Release, ccache when
# present).  Sets $jobs to DYNET_LITE_JOBS (default 2).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash scripts/setup.sh

jobs="${DYNET_LITE_JOBS:-2}"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
