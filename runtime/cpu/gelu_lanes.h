//===- gelu_lanes.h - GELU and GeGLU on 8 or 16 lanes -----------*- C++ -*-===//
//
// The GELU kernels of both ISAs, one template over the vector type
// (simd_ops.h), instantiated by gelu_avx2.cc (__m256) and gelu_avx512.cc
// (__m512): the same operations in the same order, so both give the same
// bits. Every intermediate stays in registers: one pass over x (and dy),
// one exponential per element.
//
// The erf form takes Phi(x) from Abramowitz and Stegun 7.1.26, erfc(z) =
// q(t) exp(-z^2), t = 1 / (1 + p z), z = |x| / sqrt 2 (absolute error
// below 1.5e-7, the approximation PyTorch's vectorised CPU GELU uses too),
// as erfc(z) / 2 for x < 0 and 1 - erfc(z) / 2 otherwise, so the negative
// tail has no cancellation; the exp(-x^2 / 2) it needs is also the
// gradient's normal density. The tanh form goes through sigma(2u) =
// 0.5 (1 + tanh(u)) = 1 / (1 + e), e = exp(-2u), and 0.5 (1 - tanh(u)^2) =
// 2 e sigma(2u)^2, which keep their relative accuracy in both tails where
// 1 + tanh(u) and 1 - tanh(u)^2 cancel.
//
// Both forms need e^v only as 2^y with y folded into the polynomial they
// already evaluate (y = -x^2 log2(e) / 2, or x (A + B x^2) for the tanh
// form), so there is no ln 2 reduction: k = round(y), 2^(y - k) by
// Cephes' exp2f polynomial, the power of two built in the exponent bits;
// y's own rounding costs a relative 4e-8 |y|, far below the A&S error
// where Phi is not already negligible. The polynomials are evaluated in
// Estrin's order: Zen 3 keeps only a few vectors' operations in flight, so
// the kernels were bound by the length of their chains of dependent
// multiply-adds. On a Zen 3 EPYC (AVX2), staged (SLEEF's exp called per
// vector, the rest in separate loops) they took 1.94 / 2.05 ns per element
// forward / backward, oneDNN's eltwise GELU 0.92 / 1.16 (erf); in
// registers with a Cephes exp and Horner's rule 0.96 / 1.05 (erf) and
// 0.90 / 1.35 (tanh). Against that form in one process on 2^20 elements,
// this one takes 0.97 / 1.06 -> 0.87 / 0.98 ns per element (erf) and
// 0.93 / 1.31 -> 0.57 / 0.87 (tanh); bench/kernels/gelu_kernels gave
// 0.68-0.85 / 0.79-0.97 (erf) and 0.47-0.57 / 0.67-0.86 (tanh) as the
// host's speed moved, oneDNN 0.86-1.15 / 1.14-1.70 (erf) in the same runs.
//
// Every element goes through the same vector code (the last partial
// vector zero-padded), so its bits do not depend on where a call starts:
// a row of pdrt_gelu_grad_bias gives the whole tensor's bits.
//
// Include only from gelu_avx2.cc and gelu_avx512.cc. The helpers are
// forced inline, as simd_ops.h's are; the kernels are instantiated for
// one vector type per file, so neither file's copy can stand in for the
// other's.
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_CPU_GELU_LANES_H
#define PDRT_CPU_GELU_LANES_H

#include "simd_ops.h"

#include <cstdint>
#include <type_traits>

#define PDRT_GELU_INLINE inline __attribute__((always_inline))

namespace pdrt::gelu::lanes {

using namespace pdrt::simd;

constexpr float kInvSqrt2 = 0.7071067811865476f;    // 1 / sqrt(2)
constexpr float kInvSqrt2Pi = 0.3989422804014327f;  // 1 / sqrt(2 pi)
constexpr float kSqrt2OverPi = 0.7978845608028654f; // sqrt(2 / pi)
constexpr float kCubic = 0.044715f;
constexpr float kLog2e = 1.44269504088896341f;

/// The tanh form's e stays clamped from |x| about 9 while x^3 goes on
/// growing: the terms that multiply e (or 1 / e) by x read x clamped to
/// +-1e4, where they are below 1e-23, so GELU and its gradient stay x or 0
/// and 1 or 0 up to the largest floats instead of reaching inf * 0.
constexpr float kTanhFormXBound = 1e4f;

/// 2^y for y in [-126, 126] (the callers clamp): k = round(y), f = y - k
/// (exact), 2^f = 1 + f P(f) with Cephes' exp2f polynomial on [-1/2, 1/2]
/// (relative error about 2e-7) in Estrin's order.
template <typename V> PDRT_GELU_INLINE V exp2In(V y) {
  V k = roundNearest(y);
  V f = sub(y, k);
  V f2 = mul(f, f);
  V f4 = mul(f2, f2);
  V p01 = fmadd(splat(y, 1.535336188319500e-4f), f,
                splat(y, 1.339887440266574e-3f));
  V p23 = fmadd(splat(y, 9.618437357674640e-3f), f,
                splat(y, 5.550332471162809e-2f));
  V p45 = fmadd(splat(y, 2.402264791363012e-1f), f,
                splat(y, 6.931472028550421e-1f));
  V p = fmadd(f4, p01, fmadd(f2, p23, p45));
  return mul(fmadd(f, p, splat(y, 1.0f)), pow2(k));
}

/// Phi(x) and g = exp(-x^2 / 2) (0 where that leaves the normal floats).
template <typename V> PDRT_GELU_INLINE V normalCdf(V x, V &g) {
  V t = div(splat(x, 1.0f),
            fmadd(abs(x), splat(x, 0.3275911f * kInvSqrt2), splat(x, 1.0f)));
  // q = t (a1 + a2 t + t^2 (a3 + a4 t + a5 t^2)), Estrin's order.
  V t2 = mul(t, t);
  V q = fmadd(splat(x, 1.061405429f), t2,
              fmadd(splat(x, -1.453152027f), t, splat(x, 1.421413741f)));
  q = fmadd(q, t2, fmadd(splat(x, -0.284496736f), t, splat(x, 0.254829592f)));
  V halfQ = mul(mul(splat(x, 0.5f), t), q);
  // -x^2 / 2 in powers of two.
  V y = mul(mul(x, splat(x, -0.5f * kLog2e)), x);
  V low = splat(x, -126.0f);
  g = zeroWhere(lessThan(y, low), exp2In(max(y, low)));
  V half = mul(halfQ, g);
  return select(atLeast(x, splat(x, 0.0f)), sub(splat(x, 1.0f), half), half);
}

/// e = exp(-2u), u = sqrt(2/pi) (x + c x^3), as 2^(x (A + B x^2)) with the
/// exponent clamped to +-115 (|u| <= 40).
template <typename V> PDRT_GELU_INLINE V tanhFormExp(V x) {
  constexpr float kA = -2.0f * kLog2e * kSqrt2OverPi;
  V y = mul(x, fmadd(splat(x, kA * kCubic), mul(x, x), splat(x, kA)));
  return exp2In(max(min(y, splat(x, 115.0f)), splat(x, -115.0f)));
}

template <bool ApproxTanh, typename V> PDRT_GELU_INLINE V geluOf(V x) {
  if (ApproxTanh)
    return div(max(splat(x, -kTanhFormXBound), x),
               add(splat(x, 1.0f), tanhFormExp(x)));
  V g;
  return mul(x, normalCdf(x, g));
}

template <bool ApproxTanh, typename V> PDRT_GELU_INLINE V geluGradOf(V x) {
  if (ApproxTanh) {
    // gelu' = 0.5 (1 + t) + 0.5 x (1 - t^2) u' = s + 2 x (e s) s u',
    // s = 1 / (1 + e), u' = sqrt(2/pi) (1 + 3c x^2); (e s) s because e s^2
    // underflows where 2 x e overflows, x far below 0.
    V e = tanhFormExp(x);
    V s = div(splat(x, 1.0f), add(splat(x, 1.0f), e));
    V xc = max(splat(x, -kTanhFormXBound), min(splat(x, kTanhFormXBound), x));
    V du = fmadd(splat(x, 2.0f * kSqrt2OverPi * 3.0f * kCubic), mul(xc, xc),
                 splat(x, 2.0f * kSqrt2OverPi));
    return add(mul(mul(xc, du), mul(mul(e, s), s)), s);
  }
  // gelu' = Phi(x) + x phi(x), phi the standard normal density.
  V g;
  V cdf = normalCdf(x, g);
  return fmadd(mul(splat(x, kInvSqrt2Pi), x), g, cdf);
}

/// y = GELU(x + bias) (bias null: GELU(x)).
template <typename V, bool ApproxTanh>
void forward(const float *x, const float *bias, float *y, int64_t n) {
  overVectors<V>(n, [&](int64_t i, auto loadAt, auto storeAt) {
    V v = loadAt(x + i);
    if (bias)
      v = add(v, loadAt(bias + i));
    storeAt(y + i, geluOf<ApproxTanh>(v));
  });
}

/// dx = dy * GELU'(x + bias) (bias null: GELU'(x)).
template <typename V, bool ApproxTanh>
void backward(const float *dy, const float *x, const float *bias, float *dx,
              int64_t n) {
  overVectors<V>(n, [&](int64_t i, auto loadAt, auto storeAt) {
    V v = loadAt(x + i);
    if (bias)
      v = add(v, loadAt(bias + i));
    storeAt(dx + i, mul(loadAt(dy + i), geluGradOf<ApproxTanh>(v)));
  });
}

/// Gated GELU (GeGLU): y = GELU(gate) * up.
template <typename V, bool ApproxTanh>
void gated(const float *gate, const float *up, float *y, int64_t n) {
  overVectors<V>(n, [&](int64_t i, auto loadAt, auto storeAt) {
    storeAt(y + i, mul(geluOf<ApproxTanh>(loadAt(gate + i)), loadAt(up + i)));
  });
}

/// Its gradient: dgate = dy * up * GELU'(gate), dup = dy * GELU(gate) (the
/// forward's bits of GELU(gate)). dgate may be dy.
template <typename V, bool ApproxTanh>
void gatedGrad(const float *dy, const float *gate, const float *up,
               float *dgate, float *dup, int64_t n) {
  overVectors<V>(n, [&](int64_t i, auto loadAt, auto storeAt) {
    V g = loadAt(gate + i), d = loadAt(dy + i);
    V dg = mul(mul(d, loadAt(up + i)), geluGradOf<ApproxTanh>(g));
    storeAt(dup + i, mul(d, geluOf<ApproxTanh>(g)));
    storeAt(dgate + i, dg);
  });
}

/// Calls f with the GELU form as a compile-time constant
/// (std::true_type: the tanh approximation).
template <typename F> void onForm(bool approxTanh, F f) {
  if (approxTanh)
    f(std::true_type{});
  else
    f(std::false_type{});
}

/// The kernels of gelu.h on vectors V.
template <typename V>
void forwardOn(bool approxTanh, const float *x, const float *bias, float *y,
               int64_t n) {
  onForm(approxTanh,
         [&](auto tanh) { forward<V, decltype(tanh)::value>(x, bias, y, n); });
}

template <typename V>
void backwardOn(bool approxTanh, const float *dy, const float *x,
                const float *bias, float *dx, int64_t n) {
  onForm(approxTanh, [&](auto tanh) {
    backward<V, decltype(tanh)::value>(dy, x, bias, dx, n);
  });
}

template <typename V>
void gatedOn(bool approxTanh, const float *gate, const float *up, float *y,
             int64_t n) {
  onForm(approxTanh,
         [&](auto tanh) { gated<V, decltype(tanh)::value>(gate, up, y, n); });
}

template <typename V>
void gatedGradOn(bool approxTanh, const float *dy, const float *gate,
                 const float *up, float *dgate, float *dup, int64_t n) {
  onForm(approxTanh, [&](auto tanh) {
    gatedGrad<V, decltype(tanh)::value>(dy, gate, up, dgate, dup, n);
  });
}

} // namespace pdrt::gelu::lanes

#undef PDRT_GELU_INLINE

#endif // PDRT_CPU_GELU_LANES_H
