//===- gelu_avx512.cc - GELU and its gradient on AVX-512 ------------------===//
//
// gelu_lanes.h's kernels on 16 lanes, the bits of gelu_avx2.cc's. Built
// with -mavx512f -mavx512dq (runtime/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "gelu.h"
#include "gelu_lanes.h"

namespace pdrt::gelu::avx512 {

void forward(bool approxTanh, const float *x, const float *bias, float *y,
             int64_t n) {
  lanes::forwardOn<__m512>(approxTanh, x, bias, y, n);
}

void backward(bool approxTanh, const float *dy, const float *x,
              const float *bias, float *dx, int64_t n) {
  lanes::backwardOn<__m512>(approxTanh, dy, x, bias, dx, n);
}

void gated(bool approxTanh, const float *gate, const float *up, float *y,
           int64_t n) {
  lanes::gatedOn<__m512>(approxTanh, gate, up, y, n);
}

void gatedGrad(bool approxTanh, const float *dy, const float *gate,
               const float *up, float *dgate, float *dup, int64_t n) {
  lanes::gatedGradOn<__m512>(approxTanh, dy, gate, up, dgate, dup, n);
}

} // namespace pdrt::gelu::avx512
