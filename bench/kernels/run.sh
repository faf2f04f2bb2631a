#!/usr/bin/env bash
# Builds and runs one kernel micro-benchmark of bench/kernels, single
# threaded: bench/kernels/run.sh sgemm_libs [args...], built for AVX2 + FMA
# as the runtime is. Benchmarks of pdrt's own kernels link the runtime of
# the build tree (build/lib/libpdrt_core.a).
set -euo pipefail
name="$1"; shift
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$here/../.."
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
pdrt=()
if grep -q '"pdrt/pdrt.h"' "$here/$name.cc"; then
  [ -f "$root/build/lib/libpdrt_core.a" ] || { echo "build pdc first (build/lib/libpdrt_core.a)" >&2; exit 1; }
  pdrt=(-I"$root/runtime/include" -I"$root/runtime" $(mpicxx --showme:compile) "$root/build/lib/libpdrt_core.a" $(mpicxx --showme:link) -fopenmp)
fi
c++ -O2 -mavx2 -mfma -std=c++17 "$here/$name.cc" -I/usr/include/x86_64-linux-gnu/openblas-pthread \
  "${pdrt[@]}" -lxsmm -lopenblas -ldnnl -lsleef -lrt -ldl -o "$out/$name"
OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 "$out/$name" "$@"
