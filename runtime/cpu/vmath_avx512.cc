//===- vmath_avx512.cc - The AVX-512 forms of vmath.h ---------------------===//
//
// Built with -mavx512f (runtime/CMakeLists.txt): 16 lanes of SLEEF's
// functions, masked loads and stores for the tail.
//
//===----------------------------------------------------------------------===//

#include "vmath_avx512.h"

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

} // namespace pdrt::vmath::avx512
