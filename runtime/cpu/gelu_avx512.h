//===- gelu_avx512.h - GELU and its gradient on AVX-512 ----------*- C++ -*-===//
//
// Call only when pdrt::vmath::hasAvx512() (nn.cc checks).
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_CPU_GELU_AVX512_H
#define PDRT_CPU_GELU_AVX512_H

#include <cstdint>

namespace pdrt::gelu::avx512 {

/// y = GELU(x) over n elements; the tanh approximation when `approxTanh`.
void forward(bool approxTanh, const float *x, float *y, int64_t n);

/// dx = dy * GELU'(x) over n elements.
void backward(bool approxTanh, const float *dy, const float *x, float *dx,
              int64_t n);

} // namespace pdrt::gelu::avx512

#endif // PDRT_CPU_GELU_AVX512_H
