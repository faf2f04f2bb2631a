//===- gelu.h - GELU and GeGLU, per ISA -------------------------*- C++ -*-===//
//
// nn.cc's GELU kernels: avx512 (gelu_avx512.cc) where
// pdrt::vmath::hasAvx512(), avx2 (gelu_avx2.cc, the runtime's baseline ISA
// of AVX2 + FMA) elsewhere; both are gelu_lanes.h's template and give the
// same bits. Both namespaces declare the same four kernels.
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_CPU_GELU_H
#define PDRT_CPU_GELU_H

#include <cstdint>

namespace pdrt::gelu {

namespace avx2 {

/// y = GELU(x + bias) over n elements (bias null: GELU(x)); the tanh
/// approximation when `approxTanh`. The sum is formed in registers, the
/// same bits as GELU of x + bias added beforehand. y may be x.
void forward(bool approxTanh, const float *x, const float *bias, float *y,
             int64_t n);

/// dx = dy * GELU'(x + bias) over n elements (bias null: GELU'(x)). dx may
/// be dy.
void backward(bool approxTanh, const float *dy, const float *x,
              const float *bias, float *dx, int64_t n);

/// Gated GELU (GeGLU): y = GELU(gate) * up over n elements.
void gated(bool approxTanh, const float *gate, const float *up, float *y,
           int64_t n);

/// Its gradient: dgate = dy * up * GELU'(gate), dup = dy * GELU(gate).
/// dgate may be dy.
void gatedGrad(bool approxTanh, const float *dy, const float *gate,
               const float *up, float *dgate, float *dup, int64_t n);

} // namespace avx2

/// The same kernels on 16 lanes; call only where hasAvx512().
namespace avx512 {
void forward(bool approxTanh, const float *x, const float *bias, float *y,
             int64_t n);
void backward(bool approxTanh, const float *dy, const float *x,
              const float *bias, float *dx, int64_t n);
void gated(bool approxTanh, const float *gate, const float *up, float *y,
           int64_t n);
void gatedGrad(bool approxTanh, const float *dy, const float *gate,
               const float *up, float *dgate, float *dup, int64_t n);
} // namespace avx512

} // namespace pdrt::gelu

#endif // PDRT_CPU_GELU_H
