//===- silu_avx2.cc - The logistic kernels on AVX2 + FMA ------------------===//
//
// silu_lanes.h's kernels on 8 lanes.
//
//===----------------------------------------------------------------------===//

#include "silu.h"
#include "silu_lanes.h"

namespace pdrt::silu::avx2 {

void sigmoid(const float *x, float *y, int64_t n) {
  lanes::sigmoid<__m256>(x, y, n);
}

void silu(const float *x, float *y, int64_t n) { lanes::silu<__m256>(x, y, n); }

void siluGrad(const float *dy, const float *x, float *dx, int64_t n) {
  lanes::siluGrad<__m256>(dy, x, dx, n);
}

void swiglu(const float *gate, const float *up, float *y, int64_t n) {
  lanes::swiglu<__m256>(gate, up, y, n);
}

void swigluGrad(const float *dy, const float *gate, const float *up,
                float *dgate, float *dup, int64_t n) {
  lanes::swigluGrad<__m256>(dy, gate, up, dgate, dup, n);
}

} // namespace pdrt::silu::avx2
