//===- gelu_avx2.cc - GELU and its gradient on AVX2 + FMA -----------------===//
//
// gelu_lanes.h's kernels on 8 lanes.
//
//===----------------------------------------------------------------------===//

#include "gelu.h"
#include "gelu_lanes.h"

namespace pdrt::gelu::avx2 {

void forward(bool approxTanh, const float *x, const float *bias, float *y,
             int64_t n) {
  lanes::forwardOn<__m256>(approxTanh, x, bias, y, n);
}

void backward(bool approxTanh, const float *dy, const float *x,
              const float *bias, float *dx, int64_t n) {
  lanes::backwardOn<__m256>(approxTanh, dy, x, bias, dx, n);
}

void gated(bool approxTanh, const float *gate, const float *up, float *y,
           int64_t n) {
  lanes::gatedOn<__m256>(approxTanh, gate, up, y, n);
}

void gatedGrad(bool approxTanh, const float *dy, const float *gate,
               const float *up, float *dgate, float *dup, int64_t n) {
  lanes::gatedGradOn<__m256>(approxTanh, dy, gate, up, dgate, dup, n);
}

} // namespace pdrt::gelu::avx2
