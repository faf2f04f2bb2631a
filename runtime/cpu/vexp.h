//===- vexp.h - exp of 8 or 16 floats in registers --------------*- C++ -*-===//
//
// e^x for every float, inlined into the kernels that call it (vmath's exp
// and expSum: softmax, cross-entropy, the exp op): Cephes' single-precision
// scheme. k =
// round(x log2 e); r = x - k ln 2 with ln 2 in two parts (r exact to a
// few ULP of r); e^r = 1 + r + r^2 P(r), P of degree 5; then 2^k in two
// halves, 2^(k >> 1) 2^(k - (k >> 1)), so results below the normal floats
// round once into the subnormals and k up to 128 overflows to inf.
// x is clamped to [-104, 89] first (e^x is 0 below about -103.97 and
// inf above about 88.72) and NaN passes through. Within 1.01 ULP of e^x
// over all 2^32 floats (22 of them above 1 ULP; SLEEF's u10 promises 1.0),
// which test/Unit/runtime/vmath_test.cc samples densely. The GELU kernels
// (gelu_lanes.h) take their exponential as 2^y of an exponent they fold
// into their own polynomials instead. Written in Estrin's order, as they
// are, this polynomial ran 4% faster and within 1.039 ULP (233 floats
// above 1 ULP): kept in Horner's.
//
// The 8- and 16-lane forms are one template over the same sequence of
// simd_ops.h operations, each a single rounding (every multiply-add
// written as one), so both give the same bits whichever flags a file is
// built with.
// SLEEF's Sleef_expf8_u10, a call per vector, took 0.75 ns per element
// against 0.51 for this, inlined, on a Zen 3 EPYC (bench/kernels/run.sh
// vexp); pdrt's softmax cross-entropy with its gradient on the small
// GPT's 1024 x 4096 logits went from 6.7-9.0 to 5.3-5.5 ms.
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_CPU_VEXP_H
#define PDRT_CPU_VEXP_H

#include "simd_ops.h"

#include <immintrin.h>

// Every function here is forced inline: the files built for AVX-512 and
// those built for AVX2 include it, and an out-of-line copy the linker
// shared between them could run AVX-512 code on an AVX2 CPU.
#define PDRT_VEXP_INLINE inline __attribute__((always_inline))

namespace pdrt::vexp {

namespace detail {

using namespace pdrt::simd;

template <typename V> PDRT_VEXP_INLINE V exp(V x) {
  // max and min return their second operand for a NaN x: a finite k.
  V c = min(max(x, splat(x, -104.0f)), splat(x, 89.0f));
  V k = roundNearest(mul(c, splat(x, 1.44269504088896341f)));
  V r = fnmadd(k, splat(x, 0.693359375f), c);
  r = fnmadd(k, splat(x, -2.12194440e-4f), r);
  V p = splat(x, 1.9875691500e-4f);
  p = fmadd(p, r, splat(x, 1.3981999507e-3f));
  p = fmadd(p, r, splat(x, 8.3334519073e-3f));
  p = fmadd(p, r, splat(x, 4.1665795894e-2f));
  p = fmadd(p, r, splat(x, 1.6666665459e-1f));
  p = fmadd(p, r, splat(x, 5.0000001201e-1f));
  V e = add(fmadd(p, mul(r, r), r), splat(x, 1.0f));
  V lo, hi;
  halfPowers(k, lo, hi);
  return select(isNaN(x), x, mul(mul(e, lo), hi));
}

} // namespace detail

/// e^x of 8 floats.
PDRT_VEXP_INLINE __m256 exp8(__m256 x) { return detail::exp(x); }

#ifdef __AVX512F__
/// e^x of 16 floats, the bits of exp8 on each lane.
PDRT_VEXP_INLINE __m512 exp16(__m512 x) { return detail::exp(x); }
#endif

} // namespace pdrt::vexp

#undef PDRT_VEXP_INLINE

#endif // PDRT_CPU_VEXP_H
