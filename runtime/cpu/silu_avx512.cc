//===- silu_avx512.cc - The logistic kernels on AVX-512 -------------------===//
//
// silu_lanes.h's kernels on 16 lanes, the bits of silu_avx2.cc's. Built
// with -mavx512f -mavx512dq (runtime/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "silu.h"
#include "silu_lanes.h"

namespace pdrt::silu::avx512 {

void sigmoid(const float *x, float *y, int64_t n) {
  lanes::sigmoid<__m512>(x, y, n);
}

void silu(const float *x, float *y, int64_t n) { lanes::silu<__m512>(x, y, n); }

void siluGrad(const float *dy, const float *x, float *dx, int64_t n) {
  lanes::siluGrad<__m512>(dy, x, dx, n);
}

void swiglu(const float *gate, const float *up, float *y, int64_t n) {
  lanes::swiglu<__m512>(gate, up, y, n);
}

void swigluGrad(const float *dy, const float *gate, const float *up,
                float *dgate, float *dup, int64_t n) {
  lanes::swigluGrad<__m512>(dy, gate, up, dgate, dup, n);
}

} // namespace pdrt::silu::avx512
