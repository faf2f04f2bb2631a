#!/usr/bin/env bash
# Builds pdc and runs every test through CTest: the lit suite (dialect,
# passes, importer, driver, end-to-end training against PyTorch) and the
# runtime's gtest and MPI tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd build
ctest --output-on-failure "$@"
