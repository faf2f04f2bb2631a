#!/usr/bin/env bash
# Configures and builds pdc (compiler, runtime, tests) into build/ with
# Ninja and ccache. Installs the dependencies first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# ccache hashes paths relative to the checkout, so a clone in another
# folder (CI's fresh clone) reuses what an earlier build compiled.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=Release \
  -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-19/build/utils/lit/lit.py >/dev/null
ninja -C build
