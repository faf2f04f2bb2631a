//===- vmath_avx512.cc - The AVX-512 forms of vmath.h ---------------------===//
//
// Built with -mavx512f (runtime/CMakeLists.txt): 16 lanes of SLEEF's
// functions (exp: vexp.h's, the bits of the AVX2 form), masked loads and
// stores for the tail; max, scaledMax,
// scaleInDouble, and sum, dot and expSum in vmath.cc's lane order (their
// bits), on 16-float and 8-double vectors, a row's tail through masked
// adds rather than lane by lane (attention's causal rows of 1-128
// elements nearly all have one).
//
//===----------------------------------------------------------------------===//

#include "vmath_avx512.h"
#include "vmath.h"

#include "avx512_lanes.h"
#include "vexp.h"

#include <sleef.h>

#include <immintrin.h>

namespace pdrt::vmath::avx512 {

#define PDRT_VMATH16(name, sleef16)                                            \
  void name(const float *x, float *y, int64_t n) {                             \
    int64_t i = 0;                                                             \
    for (; i + 16 <= n; i += 16)                                               \
      _mm512_storeu_ps(y + i, sleef16(_mm512_loadu_ps(x + i)));                \
    if (i < n) {                                                               \
      __mmask16 m = pdrt::avx512::laneMask(n - i);                             \
      _mm512_mask_storeu_ps(y + i, m, sleef16(_mm512_maskz_loadu_ps(m, x + i))); \
    }                                                                          \
  }

PDRT_VMATH16(log, Sleef_logf16_u10)
PDRT_VMATH16(erf, Sleef_erff16_u10)
PDRT_VMATH16(tanh, Sleef_tanhf16_u10)
PDRT_VMATH16(sin, Sleef_sinf16_u10)
PDRT_VMATH16(cos, Sleef_cosf16_u10)

#undef PDRT_VMATH16

void exp(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    __mmask16 m = pdrt::avx512::laneMask(n - i);
    __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    _mm512_mask_storeu_ps(y + i, m, vexp::exp16(v));
  }
}

namespace {
using pdrt::avx512::highHalf;
using pdrt::avx512::kAllLanes;
using pdrt::avx512::laneMask;
using pdrt::avx512::lowHalf;

/// vmath::combineLanes of lanes 0-7 in lo and 8-15 in hi: lane j + lane
/// j + 8, then j + 4, j + 2, j + 1, which _mm512_reduce_add_pd pairs alike.
inline double combineHalves(__m512d lo, __m512d hi) {
  return _mm512_reduce_add_pd(_mm512_add_pd(lo, hi));
}

/// vmath.cc's laneSum on 8-double vectors: lanes 0-7 and 8-15 of the 16
/// running sums in lo and hi; the tail's terms, lane j adding term i + j,
/// through a masked add that leaves the other lanes as they are (the bits
/// of vmath.cc's one-by-one tail).
template <typename Halves>
double laneSum(int64_t n, Halves halves) {
  __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512d l, h;
    halves(i, kAllLanes, l, h);
    lo = _mm512_add_pd(lo, l);
    hi = _mm512_add_pd(hi, h);
  }
  if (i < n) {
    __mmask16 m = laneMask(n - i);
    __m512d l, h;
    halves(i, m, l, h);
    lo = _mm512_mask_add_pd(lo, (__mmask8)m, lo, l);
    hi = _mm512_mask_add_pd(hi, (__mmask8)(m >> 8), hi, h);
  }
  return combineHalves(lo, hi);
}

/// Elements i .. i + 15 of x (the lanes of m; 0 elsewhere) as two vectors
/// of doubles.
inline void widen16(const float *x, __mmask16 m, __m512d &l, __m512d &h) {
  __m512 v = _mm512_maskz_loadu_ps(m, x);
  l = lowHalf(v);
  h = highHalf(v);
}
} // namespace

float max(const float *x, int64_t n) {
  // Four running maxima while 64 elements remain (one vmaxps chain waits
  // on its latency), then vectors, then a masked tail that repeats x[0].
  __m512 v = _mm512_set1_ps(x[0]);
  __m512 w[3] = {v, v, v};
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    v = _mm512_max_ps(v, _mm512_loadu_ps(x + i));
    for (int k = 0; k < 3; ++k)
      w[k] = _mm512_max_ps(w[k], _mm512_loadu_ps(x + i + 16 * (k + 1)));
  }
  v = _mm512_max_ps(_mm512_max_ps(v, w[0]), _mm512_max_ps(w[1], w[2]));
  for (; i + 16 <= n; i += 16)
    v = _mm512_max_ps(v, _mm512_loadu_ps(x + i));
  if (i < n)
    v = _mm512_max_ps(v, _mm512_mask_loadu_ps(_mm512_set1_ps(x[0]),
                                              laneMask(n - i), x + i));
  return _mm512_reduce_max_ps(v);
}

float scaledMax(const float *x, float scale, float *y, int64_t n) {
  const __m512 k = _mm512_set1_ps(scale);
  const __m512 first = _mm512_set1_ps(scale * x[0]);
  __m512 v = first, w = first;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m512 a = _mm512_mul_ps(k, _mm512_loadu_ps(x + i));
    __m512 b = _mm512_mul_ps(k, _mm512_loadu_ps(x + i + 16));
    _mm512_storeu_ps(y + i, a);
    _mm512_storeu_ps(y + i + 16, b);
    v = _mm512_max_ps(v, a);
    w = _mm512_max_ps(w, b);
  }
  for (; i < n; i += 16) {
    __mmask16 m = laneMask(n - i);
    __m512 a = _mm512_mul_ps(k, _mm512_maskz_loadu_ps(m, x + i));
    _mm512_mask_storeu_ps(y + i, m, a);
    v = _mm512_mask_max_ps(v, m, v, a);
  }
  return _mm512_reduce_max_ps(_mm512_max_ps(v, w));
}

void scaleInDouble(float *x, int64_t n, double factor) {
  const __m512d f = _mm512_set1_pd(factor);
  for (int64_t i = 0; i < n; i += 16) {
    __mmask16 m = laneMask(n - i);
    __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    __m256 lo = _mm512_cvtpd_ps(
        _mm512_mul_pd(lowHalf(v), f));
    __m256 hi = _mm512_cvtpd_ps(
        _mm512_mul_pd(highHalf(v), f));
    __m512 r = _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
    _mm512_mask_storeu_ps(x + i, m, r);
  }
}

double sum(const float *x, int64_t n) {
  return laneSum(n, [&](int64_t i, __mmask16 m, __m512d &l, __m512d &h) {
    widen16(x + i, m, l, h);
  });
}

double dot(const float *a, const float *b, int64_t n) {
  // Products of floats are exact in double: no FMA needed for the bits.
  return laneSum(n, [&](int64_t i, __mmask16 m, __m512d &l, __m512d &h) {
    __m512d al, ah, bl, bh;
    widen16(a + i, m, al, ah);
    widen16(b + i, m, bl, bh);
    l = _mm512_mul_pd(al, bl);
    h = _mm512_mul_pd(ah, bh);
  });
}

double expSum(const float *x, float shift, float *y, int64_t n,
              const float *next) {
  // Lanes 0-7 and 8-15 of vmath::sum's 16 running sums.
  __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
  __m512 s = _mm512_set1_ps(shift);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    if (next)
      _mm_prefetch(reinterpret_cast<const char *>(next + i), _MM_HINT_T0);
    __m512 e = vexp::exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), s));
    if (y)
      _mm512_storeu_ps(y + i, e);
    lo = _mm512_add_pd(lo, lowHalf(e));
    hi = _mm512_add_pd(hi, highHalf(e));
  }
  if (i < n) {
    __mmask16 m = laneMask(n - i);
    __m512 e = vexp::exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), s));
    if (y)
      _mm512_mask_storeu_ps(y + i, m, e);
    lo = _mm512_mask_add_pd(lo, (__mmask8)m, lo, lowHalf(e));
    hi = _mm512_mask_add_pd(hi, (__mmask8)(m >> 8), hi, highHalf(e));
  }
  return combineHalves(lo, hi);
}

} // namespace pdrt::vmath::avx512
