//===- silu.h - Sigmoid, SiLU, SwiGLU and gradients, per ISA ----*- C++ -*-===//
//
// nn.cc's logistic kernels: avx512 (silu_avx512.cc) where
// pdrt::vmath::hasAvx512(), avx2 (silu_avx2.cc, the runtime's baseline ISA
// of AVX2 + FMA) elsewhere; both are silu_lanes.h's template and give the
// same bits. Both namespaces declare the same five kernels.
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_CPU_SILU_H
#define PDRT_CPU_SILU_H

#include <cstdint>

namespace pdrt::silu {

namespace avx2 {

/// y = sigmoid(x) = 1 / (1 + exp(-x)) over n elements. y may be x.
void sigmoid(const float *x, float *y, int64_t n);

/// y = silu(x) = x / (1 + exp(-x)) over n elements. y may be x.
void silu(const float *x, float *y, int64_t n);

/// dx = dy * silu'(x), silu'(x) = s (1 + x (1 - s)), s = sigmoid(x). dx
/// may be dy.
void siluGrad(const float *dy, const float *x, float *dx, int64_t n);

/// y = silu(gate) * up: the bits of silu() followed by the multiply. y may
/// be gate or up.
void swiglu(const float *gate, const float *up, float *y, int64_t n);

/// dgate = dy * up * silu'(gate) (siluGrad's derivative), dup = dy *
/// silu(gate) (silu()'s bits). dgate may be dy.
void swigluGrad(const float *dy, const float *gate, const float *up,
                float *dgate, float *dup, int64_t n);

} // namespace avx2

/// The same kernels on 16 lanes; call only where hasAvx512().
namespace avx512 {
void sigmoid(const float *x, float *y, int64_t n);
void silu(const float *x, float *y, int64_t n);
void siluGrad(const float *dy, const float *x, float *dx, int64_t n);
void swiglu(const float *gate, const float *up, float *y, int64_t n);
void swigluGrad(const float *dy, const float *gate, const float *up,
                float *dgate, float *dup, int64_t n);
} // namespace avx512

} // namespace pdrt::silu

#endif // PDRT_CPU_SILU_H
