//===- vmath.cc - Vectorised transcendental functions on arrays -----------===//
//
// The runtime is built for AVX2 + FMA (runtime/CMakeLists.txt): 8 lanes of
// SLEEF's functions, a padded copy for the tail; exp and the row functions
// with plain loads and stores over whole vectors and masked ones for the
// tail only (a masked store costs several plain ones on AMD's cores). On
// CPUs with AVX-512F and DQ (checked once at start-up) the 16-lane forms
// of vmath_avx512.cc; the *_avx512.cc files alone are built for AVX-512.
//
//===----------------------------------------------------------------------===//

#include "vmath.h"
#include "avx2_lanes.h"
#include "vexp.h"
#include "vmath_avx512.h"

#include <sleef.h>

#include <immintrin.h>

#include <algorithm>

namespace pdrt::vmath {

bool cpuHasAvx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}

namespace {
bool avx512Enabled = cpuHasAvx512();
} // namespace

bool hasAvx512() { return avx512Enabled; }

void useAvx512(bool on) { avx512Enabled = on && cpuHasAvx512(); }

#define PDRT_VMATH(name, sleef8)                                               \
  void name(const float *x, float *y, int64_t n) {                             \
    if (hasAvx512())                                                           \
      return avx512::name(x, y, n);                                            \
    int64_t i = 0;                                                             \
    for (; i + 8 <= n; i += 8)                                                 \
      _mm256_storeu_ps(y + i, sleef8(_mm256_loadu_ps(x + i)));                 \
    if (i < n) {                                                               \
      alignas(32) float buf[8] = {0, 0, 0, 0, 0, 0, 0, 0};                     \
      std::copy(x + i, x + n, buf);                                            \
      _mm256_store_ps(buf, sleef8(_mm256_load_ps(buf)));                       \
      std::copy(buf, buf + (n - i), y + i);                                    \
    }                                                                          \
  }

PDRT_VMATH(log, Sleef_logf8_u10)
PDRT_VMATH(erf, Sleef_erff8_u10)
PDRT_VMATH(tanh, Sleef_tanhf8_u10)
PDRT_VMATH(sin, Sleef_sinf8_u10)
PDRT_VMATH(cos, Sleef_cosf8_u10)

#undef PDRT_VMATH

using pdrt::avx2::highHalf;
using pdrt::avx2::laneMask;
using pdrt::avx2::lowHalf;

void exp(const float *x, float *y, int64_t n) {
  if (hasAvx512())
    return avx512::exp(x, y, n);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, vexp::exp8(_mm256_loadu_ps(x + i)));
  if (i < n) {
    __m256i m = laneMask(n - i);
    _mm256_maskstore_ps(y + i, m, vexp::exp8(_mm256_maskload_ps(x + i, m)));
  }
}

float max(const float *x, int64_t n) {
  if (hasAvx512())
    return avx512::max(x, n);
  float m = x[0];
  int64_t i = 0;
  if (n >= 8) {
    // Four running maxima while 32 elements remain: one vmaxps chain
    // waits on its latency at every step.
    __m256 v = _mm256_loadu_ps(x);
    __m256 w[3] = {v, v, v};
    for (i = 8; i + 32 <= n; i += 32) {
      v = _mm256_max_ps(v, _mm256_loadu_ps(x + i));
      for (int k = 0; k < 3; ++k)
        w[k] = _mm256_max_ps(w[k], _mm256_loadu_ps(x + i + 8 * (k + 1)));
    }
    v = _mm256_max_ps(_mm256_max_ps(v, w[0]), _mm256_max_ps(w[1], w[2]));
    for (; i + 8 <= n; i += 8)
      v = _mm256_max_ps(v, _mm256_loadu_ps(x + i));
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, v);
    for (float l : lanes)
      m = std::max(m, l);
  }
  for (; i < n; ++i)
    m = std::max(m, x[i]);
  return m;
}

namespace {
/// The sum over i < n of term(i) in double, in the order sum and dot
/// promise: lane i % 16 adds term(i) in increasing i (4 vectors of 4
/// lanes while 16 elements remain, then the tail one by one), and the 16
/// lanes are combined pairwise. `vector(i, k)` gives terms i + 4k ..
/// i + 4k + 3 as one vector, `scalar(i)` term i.
template <typename Vector, typename Scalar>
double laneSum(int64_t n, Vector vector, Scalar scalar) {
  __m256d acc[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(),
                    _mm256_setzero_pd(), _mm256_setzero_pd()};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 4; ++k)
      acc[k] = _mm256_add_pd(acc[k], vector(i, k));
  alignas(32) double lanes[16];
  for (int k = 0; k < 4; ++k)
    _mm256_store_pd(lanes + 4 * k, acc[k]);
  for (int64_t j = 0; i < n; ++i, ++j)
    lanes[j] += scalar(i);
  return combineLanes(lanes);
}

__m256d widen(const float *x) { return _mm256_cvtps_pd(_mm_loadu_ps(x)); }
} // namespace

double sum(const float *x, int64_t n) {
  if (hasAvx512())
    return avx512::sum(x, n);
  return laneSum(
      n, [&](int64_t i, int k) { return widen(x + i + 4 * k); },
      [&](int64_t i) { return (double)x[i]; });
}

double expSum(const float *x, float shift, float *y, int64_t n,
              const float *next) {
  if (hasAvx512())
    return avx512::expSum(x, shift, y, n, next);
  // laneSum's order: acc[k] holds lanes 4k .. 4k + 3; the tail's absent
  // lanes add zero (its exps masked after the exp). Masked stores only
  // for the tail: AMD's vmaskmovps store is several times a plain one.
  __m256 s = _mm256_set1_ps(shift);
  __m256d acc[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(),
                    _mm256_setzero_pd(), _mm256_setzero_pd()};
  auto accumulate = [&](int h, __m256 e) {
    acc[2 * h] = _mm256_add_pd(acc[2 * h], lowHalf(e));
    acc[2 * h + 1] = _mm256_add_pd(acc[2 * h + 1], highHalf(e));
  };
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    if (next)
      _mm_prefetch(reinterpret_cast<const char *>(next + i), _MM_HINT_T0);
    for (int h = 0; h < 2; ++h) {
      __m256 e = vexp::exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8 * h), s));
      if (y)
        _mm256_storeu_ps(y + i + 8 * h, e);
      accumulate(h, e);
    }
  }
  for (int h = 0; i + 8 * h < n; ++h) {
    const int64_t at = i + 8 * h;
    __m256i m = laneMask(n - at);
    __m256 e = vexp::exp8(_mm256_sub_ps(_mm256_maskload_ps(x + at, m), s));
    e = _mm256_and_ps(e, _mm256_castsi256_ps(m));
    if (y)
      _mm256_maskstore_ps(y + at, m, e);
    accumulate(h, e);
  }
  alignas(32) double lanes[16];
  for (int k = 0; k < 4; ++k)
    _mm256_store_pd(lanes + 4 * k, acc[k]);
  return combineLanes(lanes);
}

float scaledMax(const float *x, float scale, float *y, int64_t n) {
  if (hasAvx512())
    return avx512::scaledMax(x, scale, y, n);
  // Two running maxima; the tail's absent lanes repeat y[0].
  const __m256 k = _mm256_set1_ps(scale);
  const __m256 first = _mm256_set1_ps(scale * x[0]);
  __m256 v = first, w = first;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 a = _mm256_mul_ps(k, _mm256_loadu_ps(x + i));
    __m256 b = _mm256_mul_ps(k, _mm256_loadu_ps(x + i + 8));
    _mm256_storeu_ps(y + i, a);
    _mm256_storeu_ps(y + i + 8, b);
    v = _mm256_max_ps(v, a);
    w = _mm256_max_ps(w, b);
  }
  for (; i < n; i += 8) {
    __m256i m = laneMask(n - i);
    __m256 a = _mm256_mul_ps(k, _mm256_maskload_ps(x + i, m));
    _mm256_maskstore_ps(y + i, m, a);
    v = _mm256_max_ps(v, _mm256_blendv_ps(first, a, _mm256_castsi256_ps(m)));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, _mm256_max_ps(v, w));
  return *std::max_element(lanes, lanes + 8);
}

void scaleInDouble(float *x, int64_t n, double factor) {
  if (hasAvx512())
    return avx512::scaleInDouble(x, n, factor);
  const __m256d f = _mm256_set1_pd(factor);
  auto scaled = [&](__m256 v) {
    __m128 lo = _mm256_cvtpd_ps(_mm256_mul_pd(lowHalf(v), f));
    __m128 hi = _mm256_cvtpd_ps(_mm256_mul_pd(highHalf(v), f));
    return _mm256_set_m128(hi, lo);
  };
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(x + i, scaled(_mm256_loadu_ps(x + i)));
  if (i < n) {
    __m256i m = laneMask(n - i);
    _mm256_maskstore_ps(x + i, m, scaled(_mm256_maskload_ps(x + i, m)));
  }
}

double dot(const float *a, const float *b, int64_t n) {
  if (hasAvx512())
    return avx512::dot(a, b, n);
  // Products of floats are exact in double: no FMA needed for the bits.
  return laneSum(
      n,
      [&](int64_t i, int k) {
        return _mm256_mul_pd(widen(a + i + 4 * k), widen(b + i + 4 * k));
      },
      [&](int64_t i) { return (double)a[i] * b[i]; });
}

} // namespace pdrt::vmath
