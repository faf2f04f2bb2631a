//===- gelu_avx2.h - GELU and its gradient on AVX2 + FMA ---------*- C++ -*-===//
//
// The kernels nn.cc runs on CPUs without AVX-512 (the runtime's baseline
// ISA is AVX2 + FMA); gelu_avx512.h holds the AVX-512 ones. Same contract.
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_CPU_GELU_AVX2_H
#define PDRT_CPU_GELU_AVX2_H

#include <cstdint>

namespace pdrt::gelu::avx2 {

/// y = GELU(x + bias) over n elements (bias null: GELU(x)); the tanh
/// approximation when `approxTanh`. The sum is formed in registers, the
/// same bits as GELU of x + bias added beforehand. y may be x.
void forward(bool approxTanh, const float *x, const float *bias, float *y,
             int64_t n);

/// dx = dy * GELU'(x + bias) over n elements (bias null: GELU'(x)). dx may
/// be dy.
void backward(bool approxTanh, const float *dy, const float *x,
              const float *bias, float *dx, int64_t n);

} // namespace pdrt::gelu::avx2

#endif // PDRT_CPU_GELU_AVX2_H
