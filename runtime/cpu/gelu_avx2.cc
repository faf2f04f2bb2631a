//===- gelu_avx2.cc - GELU and its gradient on AVX2 + FMA -----------------===//
//
// Eight lanes at a time, every intermediate in registers: one pass over x
// (and dy), one exp per element. The erf form takes Phi(x) from
// Abramowitz and Stegun 7.1.26, erfc(z) = q(t) exp(-z^2), t = 1 / (1 + p z),
// z = |x| / sqrt 2 (absolute error below 1.5e-7, the approximation
// PyTorch's vectorised CPU GELU uses too), as erfc(z) / 2 for x < 0 and
// 1 - erfc(z) / 2 otherwise, so the negative tail has no cancellation;
// the exp(-x^2 / 2) it needs is also the gradient's normal density. The
// tanh form goes through sigma(2u) = 0.5 (1 + tanh(u)) = 1 / (1 + e),
// e = exp(-2u), as gelu_avx512.cc does.
//
// Both forms need e^v only as 2^y with y folded into the polynomial they
// already evaluate (y = -x^2 log2(e) / 2, or x (A + B x^2) for the tanh
// form), so there is no ln 2 reduction: k = round(y), 2^(y - k) by
// Cephes' exp2f polynomial, the power of two built in the exponent bits;
// y's own rounding costs a relative 4e-8 |y|, far below the A&S error
// where Phi is not already negligible. The polynomials are evaluated in
// Estrin's order: Zen 3 keeps only a few vectors' operations in flight, so
// the kernels were bound by the length of their chains of dependent
// multiply-adds. Staged (SLEEF's exp called per vector, the rest in
// separate loops) they took 1.94 / 2.05 ns per element forward / backward
// on a Zen 3 EPYC, oneDNN's eltwise GELU 0.92 / 1.16 (erf); in registers
// with a Cephes exp and Horner's rule 0.96 / 1.05 (erf) and 0.90 / 1.35
// (tanh). Against that form in one process on 2^20 elements, this one
// takes 0.97 / 1.06 -> 0.87 / 0.98 ns per element (erf) and 0.93 / 1.31
// -> 0.57 / 0.87 (tanh); bench/kernels/gelu_kernels gave 0.68-0.85 /
// 0.79-0.97 (erf) and 0.47-0.57 / 0.67-0.86 (tanh) as the host's speed
// moved, oneDNN 0.86-1.15 / 1.14-1.70 (erf) in the same runs.
//
// Every element goes through the same vector code (the last n % 8 through
// a zero-padded vector), so its bits do not depend on where a call starts:
// a row of pdrt_gelu_grad_bias gives the whole tensor's bits.
//
//===----------------------------------------------------------------------===//

#include "gelu.h"

#include <immintrin.h>

namespace pdrt::gelu::avx2 {

namespace {

constexpr float kInvSqrt2 = 0.7071067811865476f;    // 1 / sqrt(2)
constexpr float kInvSqrt2Pi = 0.3989422804014327f;  // 1 / sqrt(2 pi)
constexpr float kSqrt2OverPi = 0.7978845608028654f; // sqrt(2 / pi)
constexpr float kCubic = 0.044715f;

inline __m256 splat(float v) { return _mm256_set1_ps(v); }

/// 2^y for y in [-126, 126] (the callers clamp): k = round(y), f = y - k
/// (exact), 2^f = 1 + f P(f) with Cephes' exp2f polynomial on [-1/2, 1/2]
/// (relative error about 2e-7) in Estrin's order, which halves the chain
/// of dependent multiply-adds that Horner's rule makes.
inline __m256 exp2In(__m256 y) {
  __m256 k = _mm256_round_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 f = _mm256_sub_ps(y, k);
  __m256 f2 = _mm256_mul_ps(f, f);
  __m256 f4 = _mm256_mul_ps(f2, f2);
  __m256 p01 = _mm256_fmadd_ps(splat(1.535336188319500e-4f), f,
                               splat(1.339887440266574e-3f));
  __m256 p23 = _mm256_fmadd_ps(splat(9.618437357674640e-3f), f,
                               splat(5.550332471162809e-2f));
  __m256 p45 = _mm256_fmadd_ps(splat(2.402264791363012e-1f), f,
                               splat(6.931472028550421e-1f));
  __m256 p = _mm256_fmadd_ps(f4, p01, _mm256_fmadd_ps(f2, p23, p45));
  __m256 e = _mm256_fmadd_ps(f, p, splat(1.0f));
  __m256i bits = _mm256_slli_epi32(
      _mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(e, _mm256_castsi256_ps(bits));
}

constexpr float kLog2e = 1.44269504088896341f;

/// Phi(x) and g = exp(-x^2 / 2) (0 where that leaves the normal floats).
inline __m256 normalCdf(__m256 x, __m256 &g) {
  const __m256 a1 = splat(0.254829592f), a2 = splat(-0.284496736f),
               a3 = splat(1.421413741f), a4 = splat(-1.453152027f),
               a5 = splat(1.061405429f);
  __m256 absX = _mm256_andnot_ps(splat(-0.0f), x);
  __m256 t = _mm256_div_ps(
      splat(1.0f), _mm256_fmadd_ps(absX, splat(0.3275911f * kInvSqrt2),
                                   splat(1.0f)));
  // q = t (a1 + a2 t + t^2 (a3 + a4 t + a5 t^2)), Estrin's order.
  __m256 t2 = _mm256_mul_ps(t, t);
  __m256 q = _mm256_fmadd_ps(a5, t2, _mm256_fmadd_ps(a4, t, a3));
  q = _mm256_fmadd_ps(q, t2, _mm256_fmadd_ps(a2, t, a1));
  __m256 halfQ = _mm256_mul_ps(_mm256_mul_ps(splat(0.5f), t), q);
  // -x^2 / 2 in powers of two.
  __m256 y = _mm256_mul_ps(_mm256_mul_ps(x, splat(-0.5f * kLog2e)), x);
  __m256 underflow = _mm256_cmp_ps(y, splat(-126.0f), _CMP_LT_OQ);
  g = _mm256_andnot_ps(underflow, exp2In(_mm256_max_ps(y, splat(-126.0f))));
  __m256 half = _mm256_mul_ps(halfQ, g);
  __m256 positive = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ);
  return _mm256_blendv_ps(half, _mm256_sub_ps(splat(1.0f), half), positive);
}

/// e = exp(-2u), u = sqrt(2/pi) (x + c x^3), as 2^(x (A + B x^2)) with the
/// exponent clamped to +-115 (|u| <= 40).
inline __m256 tanhFormExp(__m256 x) {
  constexpr float kA = -2.0f * kLog2e * kSqrt2OverPi;
  __m256 y = _mm256_mul_ps(
      x, _mm256_fmadd_ps(splat(kA * kCubic), _mm256_mul_ps(x, x), splat(kA)));
  y = _mm256_max_ps(_mm256_min_ps(y, splat(115.0f)), splat(-115.0f));
  return exp2In(y);
}

/// The tanh form's e stays clamped from |x| about 9 while x^3 goes on
/// growing: the terms that multiply e (or 1 / e) by x read x clamped to
/// +-1e4, where they are below 1e-23, so GELU and its gradient stay x or 0
/// and 1 or 0 up to the largest floats instead of reaching inf * 0.
constexpr float kTanhFormXBound = 1e4f;

inline __m256 geluOf(bool approxTanh, __m256 x) {
  if (approxTanh)
    return _mm256_div_ps(_mm256_max_ps(splat(-kTanhFormXBound), x),
                         _mm256_add_ps(splat(1.0f), tanhFormExp(x)));
  __m256 g;
  return _mm256_mul_ps(x, normalCdf(x, g));
}

inline __m256 geluGradOf(bool approxTanh, __m256 x) {
  if (approxTanh) {
    // gelu' = 0.5 (1 + t) + 0.5 x (1 - t^2) u' = s + 2 x (e s) s u',
    // s = 1 / (1 + e), u' = sqrt(2/pi) (1 + 3c x^2).
    __m256 e = tanhFormExp(x);
    __m256 s = _mm256_div_ps(splat(1.0f), _mm256_add_ps(splat(1.0f), e));
    __m256 xc = _mm256_max_ps(splat(-kTanhFormXBound),
                              _mm256_min_ps(splat(kTanhFormXBound), x));
    __m256 du = _mm256_fmadd_ps(splat(2.0f * kSqrt2OverPi * 3.0f * kCubic),
                                _mm256_mul_ps(xc, xc),
                                splat(2.0f * kSqrt2OverPi));
    __m256 tail = _mm256_mul_ps(_mm256_mul_ps(xc, du),
                                _mm256_mul_ps(_mm256_mul_ps(e, s), s));
    return _mm256_add_ps(tail, s);
  }
  // gelu' = Phi(x) + x phi(x), phi the standard normal density.
  __m256 g;
  __m256 cdf = normalCdf(x, g);
  return _mm256_fmadd_ps(_mm256_mul_ps(splat(kInvSqrt2Pi), x), g, cdf);
}

/// The mask of the first `count` (< 8) lanes.
inline __m256i firstLanes(int64_t count) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)count), lanes);
}

/// x + bias of 8 lanes at i (bias null: x), masked loads on a tail.
inline __m256 loadSum(const float *x, const float *bias, int64_t i,
                      const __m256i *mask) {
  __m256 v = mask ? _mm256_maskload_ps(x + i, *mask) : _mm256_loadu_ps(x + i);
  if (!bias)
    return v;
  __m256 b = mask ? _mm256_maskload_ps(bias + i, *mask)
                  : _mm256_loadu_ps(bias + i);
  return _mm256_add_ps(v, b);
}

/// Calls `lanes(i, mask)` for every 8 lanes of [0, n), mask null on whole
/// vectors and the tail's on the last n % 8.
template <typename Lanes> void overLanes(int64_t n, Lanes lanes) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    lanes(i, nullptr);
  if (i < n) {
    __m256i mask = firstLanes(n - i);
    lanes(i, &mask);
  }
}

inline void store(float *y, int64_t i, const __m256i *mask, __m256 v) {
  if (mask)
    _mm256_maskstore_ps(y + i, *mask, v);
  else
    _mm256_storeu_ps(y + i, v);
}

template <bool ApproxTanh>
void forwardIn(const float *x, const float *bias, float *y, int64_t n) {
  overLanes(n, [&](int64_t i, const __m256i *mask) {
    store(y, i, mask, geluOf(ApproxTanh, loadSum(x, bias, i, mask)));
  });
}

template <bool ApproxTanh>
void backwardIn(const float *dy, const float *x, const float *bias, float *dx,
                int64_t n) {
  overLanes(n, [&](int64_t i, const __m256i *mask) {
    __m256 grad = geluGradOf(ApproxTanh, loadSum(x, bias, i, mask));
    __m256 d = mask ? _mm256_maskload_ps(dy + i, *mask) : _mm256_loadu_ps(dy + i);
    store(dx, i, mask, _mm256_mul_ps(d, grad));
  });
}

} // namespace

void forward(bool approxTanh, const float *x, const float *bias, float *y,
             int64_t n) {
  if (approxTanh)
    forwardIn<true>(x, bias, y, n);
  else
    forwardIn<false>(x, bias, y, n);
}

void backward(bool approxTanh, const float *dy, const float *x,
              const float *bias, float *dx, int64_t n) {
  if (approxTanh)
    backwardIn<true>(dy, x, bias, dx, n);
  else
    backwardIn<false>(dy, x, bias, dx, n);
}

} // namespace pdrt::gelu::avx2
