#!/usr/bin/env bash
# Builds and runs one kernel micro-benchmark of bench/kernels, single
# threaded: bench/kernels/run.sh sgemm_libs [args...]
set -euo pipefail
name="$1"; shift
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
c++ -O2 -std=c++17 "$here/$name.cc" -I/usr/include/x86_64-linux-gnu/openblas-pthread \
  -lopenblas -ldnnl -lsleef -o "$out/$name"
OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 "$out/$name" "$@"
