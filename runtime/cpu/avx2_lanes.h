//===- avx2_lanes.h - Lane masks and widening on AVX2 -----------*- C++ -*-===//
//
// What the AVX2 row kernels share (vmath.cc, layer_norm_avx2.cc), as
// avx512_lanes.h is for the AVX-512 ones: the mask of a row's last partial
// vector for maskload / maskstore, and an 8-float vector widened to two
// 4-double vectors. Include only from files built for AVX2 (not the
// *_avx512.cc ones: an inline function built for both could be shared by
// the linker).
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_CPU_AVX2_LANES_H
#define PDRT_CPU_AVX2_LANES_H

#include "simd_ops.h"

#include <immintrin.h>

#include <cstdint>

namespace pdrt::avx2 {

/// The lanes of a vector that starts `left` elements before a row's end
/// (all 8, or the first `left`) as a mask for maskload and maskstore.
inline __m256i laneMask(int64_t left) {
  return simd::firstLanes(__m256(), left);
}

/// Lanes 0-3 of v as doubles.
inline __m256d lowHalf(__m256 v) {
  return _mm256_cvtps_pd(_mm256_castps256_ps128(v));
}

/// Lanes 4-7 of v as doubles.
inline __m256d highHalf(__m256 v) {
  return _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
}

} // namespace pdrt::avx2

#endif // PDRT_CPU_AVX2_LANES_H
