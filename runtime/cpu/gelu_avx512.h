//===- gelu_avx512.h - GELU and its gradient on AVX-512 ----------*- C++ -*-===//
//
// Call only when pdrt::vmath::hasAvx512() (nn.cc checks).
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_CPU_GELU_AVX512_H
#define PDRT_CPU_GELU_AVX512_H

#include <cstdint>

namespace pdrt::gelu::avx512 {

/// y = GELU(x + bias) over n elements (bias null: GELU(x)); the tanh
/// approximation when `approxTanh`. The sum is formed in registers, the
/// same bits as GELU of x + bias added beforehand.
void forward(bool approxTanh, const float *x, const float *bias, float *y,
             int64_t n);

/// dx = dy * GELU'(x + bias) over n elements (bias null: GELU'(x)).
void backward(bool approxTanh, const float *dy, const float *x,
              const float *bias, float *dx, int64_t n);

} // namespace pdrt::gelu::avx512

#endif // PDRT_CPU_GELU_AVX512_H
