//===- simd_ops.h - One set of vector operations on 8 and 16 floats -*- C++ -*-===//
//
// The kernels written once as templates over the vector type (vexp.h's
// exp, gelu_lanes.h's GELU, silu_lanes.h's SiLU) spell their arithmetic
// with these overloads: the same name for __m256 (AVX2 + FMA) and __m512
// (AVX-512F, where the including file is built for it). Every arithmetic
// operation rounds once (a multiply-add is one fused operation, a division
// is IEEE division) and a comparison gives the same lanes on both widths,
// so one template gives the same bits on both ISAs. Masks are the
// comparison results each ISA has: a vector of all-ones lanes on AVX2, a
// __mmask16 on AVX-512. overVectors runs such a kernel over an array, its
// last partial vector through masked loads and stores.
//
// Every function here is forced inline: files built for AVX-512 and files
// built for AVX2 include this header, and an out-of-line copy the linker
// shared between them could run AVX-512 code on an AVX2 CPU.
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_CPU_SIMD_OPS_H
#define PDRT_CPU_SIMD_OPS_H

#include <immintrin.h>

#include <cstdint>

#define PDRT_SIMD_INLINE inline __attribute__((always_inline))

namespace pdrt::simd {

/// The lane count of a vector type.
template <typename V> constexpr int kLanes = sizeof(V) / sizeof(float);

// --- 8 lanes --------------------------------------------------------------

PDRT_SIMD_INLINE __m256 splat(__m256, float v) { return _mm256_set1_ps(v); }
PDRT_SIMD_INLINE __m256 min(__m256 a, __m256 b) { return _mm256_min_ps(a, b); }
PDRT_SIMD_INLINE __m256 max(__m256 a, __m256 b) { return _mm256_max_ps(a, b); }
PDRT_SIMD_INLINE __m256 mul(__m256 a, __m256 b) { return _mm256_mul_ps(a, b); }
PDRT_SIMD_INLINE __m256 add(__m256 a, __m256 b) { return _mm256_add_ps(a, b); }
PDRT_SIMD_INLINE __m256 sub(__m256 a, __m256 b) { return _mm256_sub_ps(a, b); }
PDRT_SIMD_INLINE __m256 div(__m256 a, __m256 b) { return _mm256_div_ps(a, b); }
PDRT_SIMD_INLINE __m256 fmadd(__m256 a, __m256 b, __m256 c) {
  return _mm256_fmadd_ps(a, b, c);
}
PDRT_SIMD_INLINE __m256 fnmadd(__m256 a, __m256 b, __m256 c) {
  return _mm256_fnmadd_ps(a, b, c);
}
PDRT_SIMD_INLINE __m256 abs(__m256 a) {
  return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a);
}
PDRT_SIMD_INLINE __m256 roundNearest(__m256 a) {
  return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
/// 2^k for the integers k in [-126, 127], built in the exponent bits.
PDRT_SIMD_INLINE __m256 pow2(__m256i k) {
  return _mm256_castsi256_ps(
      _mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23));
}
/// 2^k for the integral floats k in [-126, 127].
PDRT_SIMD_INLINE __m256 pow2(__m256 k) { return pow2(_mm256_cvtps_epi32(k)); }
/// 2^(k >> 1) and 2^(k - (k >> 1)) for the integral floats k.
PDRT_SIMD_INLINE void halfPowers(__m256 k, __m256 &p, __m256 &q) {
  __m256i ki = _mm256_cvtps_epi32(k);
  __m256i lo = _mm256_srai_epi32(ki, 1);
  p = pow2(lo);
  q = pow2(_mm256_sub_epi32(ki, lo));
}
PDRT_SIMD_INLINE __m256 lessThan(__m256 a, __m256 b) {
  return _mm256_cmp_ps(a, b, _CMP_LT_OQ);
}
PDRT_SIMD_INLINE __m256 atLeast(__m256 a, __m256 b) {
  return _mm256_cmp_ps(a, b, _CMP_GE_OQ);
}
PDRT_SIMD_INLINE __m256 isNaN(__m256 a) {
  return _mm256_cmp_ps(a, a, _CMP_UNORD_Q);
}
/// ifTrue where `mask`, else ifFalse.
PDRT_SIMD_INLINE __m256 select(__m256 mask, __m256 ifTrue, __m256 ifFalse) {
  return _mm256_blendv_ps(ifFalse, ifTrue, mask);
}
/// 0 where `mask`, else v.
PDRT_SIMD_INLINE __m256 zeroWhere(__m256 mask, __m256 v) {
  return _mm256_andnot_ps(mask, v);
}
PDRT_SIMD_INLINE __m256 load(__m256, const float *p) { return _mm256_loadu_ps(p); }
PDRT_SIMD_INLINE void store(float *p, __m256 v) { _mm256_storeu_ps(p, v); }
/// The mask of the first min(count, 8) lanes for maskload / maskstore.
PDRT_SIMD_INLINE __m256i firstLanes(__m256, int64_t count) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  int kept = count < 8 ? (int)count : 8;
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(kept), lane);
}
/// The lanes of `mask` loaded, zeros elsewhere (nothing past them read).
PDRT_SIMD_INLINE __m256 loadLanes(const float *p, __m256i mask) {
  return _mm256_maskload_ps(p, mask);
}
PDRT_SIMD_INLINE void storeLanes(float *p, __m256i mask, __m256 v) {
  _mm256_maskstore_ps(p, mask, v);
}

// --- 16 lanes -------------------------------------------------------------

#ifdef __AVX512F__
PDRT_SIMD_INLINE __m512 splat(__m512, float v) { return _mm512_set1_ps(v); }
PDRT_SIMD_INLINE __m512 min(__m512 a, __m512 b) { return _mm512_min_ps(a, b); }
PDRT_SIMD_INLINE __m512 max(__m512 a, __m512 b) { return _mm512_max_ps(a, b); }
PDRT_SIMD_INLINE __m512 mul(__m512 a, __m512 b) { return _mm512_mul_ps(a, b); }
PDRT_SIMD_INLINE __m512 add(__m512 a, __m512 b) { return _mm512_add_ps(a, b); }
PDRT_SIMD_INLINE __m512 sub(__m512 a, __m512 b) { return _mm512_sub_ps(a, b); }
PDRT_SIMD_INLINE __m512 div(__m512 a, __m512 b) { return _mm512_div_ps(a, b); }
PDRT_SIMD_INLINE __m512 fmadd(__m512 a, __m512 b, __m512 c) {
  return _mm512_fmadd_ps(a, b, c);
}
PDRT_SIMD_INLINE __m512 fnmadd(__m512 a, __m512 b, __m512 c) {
  return _mm512_fnmadd_ps(a, b, c);
}
PDRT_SIMD_INLINE __m512 abs(__m512 a) { return _mm512_abs_ps(a); }
PDRT_SIMD_INLINE __m512 roundNearest(__m512 a) {
  return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
PDRT_SIMD_INLINE __m512 pow2(__m512i k) {
  return _mm512_castsi512_ps(
      _mm512_slli_epi32(_mm512_add_epi32(k, _mm512_set1_epi32(127)), 23));
}
PDRT_SIMD_INLINE __m512 pow2(__m512 k) { return pow2(_mm512_cvtps_epi32(k)); }
PDRT_SIMD_INLINE void halfPowers(__m512 k, __m512 &p, __m512 &q) {
  __m512i ki = _mm512_cvtps_epi32(k);
  __m512i lo = _mm512_srai_epi32(ki, 1);
  p = pow2(lo);
  q = pow2(_mm512_sub_epi32(ki, lo));
}
PDRT_SIMD_INLINE __mmask16 lessThan(__m512 a, __m512 b) {
  return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ);
}
PDRT_SIMD_INLINE __mmask16 atLeast(__m512 a, __m512 b) {
  return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ);
}
PDRT_SIMD_INLINE __mmask16 isNaN(__m512 a) {
  return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q);
}
PDRT_SIMD_INLINE __m512 select(__mmask16 mask, __m512 ifTrue, __m512 ifFalse) {
  return _mm512_mask_blend_ps(mask, ifFalse, ifTrue);
}
PDRT_SIMD_INLINE __m512 zeroWhere(__mmask16 mask, __m512 v) {
  return _mm512_maskz_mov_ps(static_cast<__mmask16>(~mask), v);
}
PDRT_SIMD_INLINE __m512 load(__m512, const float *p) { return _mm512_loadu_ps(p); }
PDRT_SIMD_INLINE void store(float *p, __m512 v) { _mm512_storeu_ps(p, v); }
/// The mask of the first min(count, 16) lanes.
PDRT_SIMD_INLINE __mmask16 firstLanes(__m512, int64_t count) {
  return count >= 16 ? static_cast<__mmask16>(0xFFFF)
                     : static_cast<__mmask16>((1u << count) - 1);
}
PDRT_SIMD_INLINE __m512 loadLanes(const float *p, __mmask16 mask) {
  return _mm512_maskz_loadu_ps(mask, p);
}
PDRT_SIMD_INLINE void storeLanes(float *p, __mmask16 mask, __m512 v) {
  _mm512_mask_storeu_ps(p, mask, v);
}
#endif

// --- Loops ----------------------------------------------------------------

/// Calls `body(i, loadAt, storeAt)` for every vector of V over [0, n):
/// whole vectors with plain loads and stores, the last partial one with
/// masked ones (zeros loaded past n, nothing stored there), so every
/// element goes through the same vector code wherever a call starts.
template <typename V, typename Body>
PDRT_SIMD_INLINE void overVectors(int64_t n, Body body) {
  constexpr int64_t w = kLanes<V>;
  int64_t i = 0;
  for (; i + w <= n; i += w)
    body(i, [](const float *p) { return load(V(), p); },
         [](float *p, V v) { store(p, v); });
  if (i < n) {
    auto mask = firstLanes(V(), n - i);
    body(i, [mask](const float *p) { return loadLanes(p, mask); },
         [mask](float *p, V v) { storeLanes(p, mask, v); });
  }
}

} // namespace pdrt::simd

#undef PDRT_SIMD_INLINE

#endif // PDRT_CPU_SIMD_OPS_H
