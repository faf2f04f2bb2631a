//===- vmath_avx512.cc - The AVX-512 forms of vmath.h ---------------------===//
//
// Built with -mavx512f (runtime/CMakeLists.txt): 16 lanes of SLEEF's
// functions, masked loads and stores for the tail.
//
//===----------------------------------------------------------------------===//

#include "vmath_avx512.h"
#include "vmath.h"

#include <sleef.h>

#include <immintrin.h>

namespace pdrt::vmath::avx512 {

#define PDRT_VMATH16(name, sleef16)                                            \
  void name(const float *x, float *y, int64_t n) {                             \
    int64_t i = 0;                                                             \
    for (; i + 16 <= n; i += 16)                                               \
      _mm512_storeu_ps(y + i, sleef16(_mm512_loadu_ps(x + i)));                \
    if (i < n) {                                                               \
      __mmask16 m = (__mmask16)((1u << (n - i)) - 1);                          \
      _mm512_mask_storeu_ps(y + i, m, sleef16(_mm512_maskz_loadu_ps(m, x + i))); \
    }                                                                          \
  }

PDRT_VMATH16(exp, Sleef_expf16_u10)
PDRT_VMATH16(log, Sleef_logf16_u10)
PDRT_VMATH16(erf, Sleef_erff16_u10)
PDRT_VMATH16(tanh, Sleef_tanhf16_u10)
PDRT_VMATH16(sin, Sleef_sinf16_u10)
PDRT_VMATH16(cos, Sleef_cosf16_u10)

#undef PDRT_VMATH16

double expSum(const float *x, float shift, float *y, int64_t n) {
  // Lanes 0-7 and 8-15 of vmath::sum's 16 running sums.
  __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
  __m512 s = _mm512_set1_ps(shift);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 e = Sleef_expf16_u10(_mm512_sub_ps(_mm512_loadu_ps(x + i), s));
    if (y)
      _mm512_storeu_ps(y + i, e);
    lo = _mm512_add_pd(lo, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
    hi = _mm512_add_pd(hi, _mm512_cvtps_pd(_mm512_extractf32x8_ps(e, 1)));
  }
  alignas(64) double lanes[16];
  _mm512_store_pd(lanes, lo);
  _mm512_store_pd(lanes + 8, hi);
  if (i < n) {
    __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
    __m512 e = Sleef_expf16_u10(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), s));
    if (y)
      _mm512_mask_storeu_ps(y + i, m, e);
    alignas(64) float tail[16];
    _mm512_store_ps(tail, e);
    for (int64_t j = 0; j < n - i; ++j)
      lanes[j] += (double)tail[j];
  }
  return combineLanes(lanes);
}

} // namespace pdrt::vmath::avx512
