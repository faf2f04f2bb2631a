#!/usr/bin/env bash
# Builds pdc and runs every test through CTest: the lit suite (dialect,
# passes, importer, driver, end-to-end training against PyTorch, and the
# tests of today's exporter and onnxruntime) and the runtime's gtest and MPI
# tests.
#
# The PyPI venv of scripts/setup-venv.sh (torch 2.x, onnx, onnxscript,
# onnxruntime) is created while the build runs. Its tests (lit feature
# `pdc-venv`) are skipped, with a warning, only if PyPI cannot be reached;
# PDC_NO_VENV=1 skips creating it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
mkdir -p build
venv_pid=
if [ "${PDC_NO_VENV:-0}" != 1 ]; then
  bash scripts/setup-venv.sh >build/setup-venv.log 2>&1 &
  venv_pid=$!
fi
bash scripts/build.sh
if [ -n "$venv_pid" ]; then
  if wait "$venv_pid"; then
    tail -n 1 build/setup-venv.log
  else
    echo "warning: scripts/setup-venv.sh failed (build/setup-venv.log follows);" \
         "the pdc-venv tests are skipped" >&2
    tail -n 20 build/setup-venv.log >&2
  fi
fi
cd build
ctest --output-on-failure "$@"
