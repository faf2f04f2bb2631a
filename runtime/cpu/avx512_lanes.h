//===- avx512_lanes.h - Lane masks and widening on AVX-512 --------*- C++ -*-===//
//
// The pieces the AVX-512 row kernels share: the mask of a row's last
// partial vector and a 16-float vector widened to two 8-double vectors.
// Include only from the files built with -mavx512f -mavx512dq
// (runtime/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_CPU_AVX512_LANES_H
#define PDRT_CPU_AVX512_LANES_H

#include "simd_ops.h"

#include <immintrin.h>

#include <cstdint>

namespace pdrt::avx512 {

constexpr __mmask16 kAllLanes = 0xFFFF;

/// The lanes of a vector that starts `left` elements before a row's end:
/// all 16, or the first `left`.
inline __mmask16 laneMask(int64_t left) {
  return simd::firstLanes(__m512(), left);
}

/// Lanes 0-7 of v as doubles.
inline __m512d lowHalf(__m512 v) {
  return _mm512_cvtps_pd(_mm512_castps512_ps256(v));
}

/// Lanes 8-15 of v as doubles.
inline __m512d highHalf(__m512 v) {
  return _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1));
}

} // namespace pdrt::avx512

#endif // PDRT_CPU_AVX512_LANES_H
