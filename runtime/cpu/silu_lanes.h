//===- silu_lanes.h - Sigmoid, SiLU, SwiGLU on 8 or 16 lanes ----*- C++ -*-===//
//
// The logistic kernels of both ISAs, one template over the vector type
// (simd_ops.h), instantiated by silu_avx2.cc (__m256) and silu_avx512.cc
// (__m512): the same operations in the same order, so both give the same
// bits. Every intermediate stays in registers: one pass over the operands,
// one exponential (vexp.h's, inlined) and one division per element.
//
// Each kernel forms s = sigmoid(x) = 1 / (1 + exp(-x)) and derives the
// rest from it: silu(x) = x s, silu'(x) = s (1 + x (1 - s)) (the one form
// of the SiLU gradient, for pdrt_unary_grad and pdrt_swiglu_grad alike),
// swiglu = silu(gate) up with silu's bits. So every kernel divides once
// per element; x / (1 + exp(-x)) is half an ULP closer but costs
// pdrt_swiglu_grad, which needs both s and silu, a second division (about
// 15% of its time). Over every float of magnitude 1e-30 to 87, sigmoid is
// within 2.5 ULP of the exact value and silu within 2.9; silu' is within
// 1.3e-7 max(1, |x|). Below x = -88.7 exp(-x) overflows: s is 0 and
// sigmoid, silu and silu' are 0 or -0 (silu(-90) is -0, not NaN) up to
// the largest finite floats; far above 0 they are 1, x and 1. NaN stays
// NaN, and inf times 0 makes silu(-inf) and silu'(+-inf) NaN, as
// x / (1 + exp(-x)) and the scalar form of silu' do.
//
// The staged kernels these replace (nn.cc until 2026-11-27) negated a
// chunk of x into a stack buffer, called vmath::exp on it and divided in
// a second loop. On a 2-core AMD EPYC Zen 3 (AVX2 + FMA, no AVX-512),
// over 2^20 floats, ns per element forward / backward (bench/kernels/
// run.sh llama_mlp, eleven runs on a shared host): SiLU 0.68-0.85 /
// 0.82-1.05, staged 0.84-1.45 / 1.07-1.58, oneDNN's eltwise swish
// 0.72-1.12 / 1.01-1.63; SwiGLU 0.74-1.00 / 1.22-1.47, staged 1.06-1.43 /
// 1.43-2.15, oneDNN's swish and binary_mul 1.50-1.86 / 3.28-4.50. In
// each run these were 1.2-1.6 times as fast as the staged loops (SiLU's
// forward 1.0-1.7). The gain is in arrays past L2: on 2^14 floats the
// staged loops ran about as fast, both bound by the floating-point pipes.
// An exponential of the kernels' own (one power of two, no NaN select,
// NaN carried through the clamps) measured 10-20% faster again; they
// share vexp.h's instead.
//
// Every element goes through the same vector code (the last partial
// vector zero-padded), so its bits do not depend on where a call starts.
// Each vector's operands are loaded before its results are stored, so a
// gradient may be written over dy.
//
// Include only from silu_avx2.cc and silu_avx512.cc (built with
// -ffp-contract=off: every multiply-add is written out). The helpers are
// forced inline, as simd_ops.h's are; the kernels are instantiated for one
// vector type per file, so neither file's copy can stand in for the
// other's.
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_CPU_SILU_LANES_H
#define PDRT_CPU_SILU_LANES_H

#include "simd_ops.h"
#include "vexp.h"

#include <cstdint>

#define PDRT_SILU_INLINE inline __attribute__((always_inline))

namespace pdrt::silu::lanes {

using namespace pdrt::simd;

/// vexp.h's e^x on 8 or 16 lanes.
PDRT_SILU_INLINE __m256 expOf(__m256 x) { return vexp::exp8(x); }
#ifdef __AVX512F__
PDRT_SILU_INLINE __m512 expOf(__m512 x) { return vexp::exp16(x); }
#endif

/// sigmoid(x) = 1 / (1 + exp(-x)): 0 where exp(-x) overflows (x below
/// -88.7), 1 where it is below half an ULP of 1 (x above 16.7).
template <typename V> PDRT_SILU_INLINE V sigmoidOf(V x) {
  V one = splat(x, 1.0f);
  return div(one, add(one, expOf(sub(splat(x, 0.0f), x))));
}

/// silu(x) = x s from s = sigmoid(x).
template <typename V> PDRT_SILU_INLINE V siluFrom(V x, V s) {
  return mul(x, s);
}

/// silu'(x) = s (1 + x (1 - s)) from s = sigmoid(x).
template <typename V> PDRT_SILU_INLINE V siluDerivative(V x, V s) {
  V one = splat(x, 1.0f);
  return mul(s, add(one, mul(x, sub(one, s))));
}

// The kernels of silu.h on vectors V.

template <typename V> void sigmoid(const float *x, float *y, int64_t n) {
  overVectors<V>(n, [&](int64_t i, auto loadAt, auto storeAt) {
    storeAt(y + i, sigmoidOf(loadAt(x + i)));
  });
}

template <typename V> void silu(const float *x, float *y, int64_t n) {
  overVectors<V>(n, [&](int64_t i, auto loadAt, auto storeAt) {
    V v = loadAt(x + i);
    storeAt(y + i, siluFrom(v, sigmoidOf(v)));
  });
}

template <typename V>
void siluGrad(const float *dy, const float *x, float *dx, int64_t n) {
  overVectors<V>(n, [&](int64_t i, auto loadAt, auto storeAt) {
    V v = loadAt(x + i);
    V d = loadAt(dy + i);
    storeAt(dx + i, mul(d, siluDerivative(v, sigmoidOf(v))));
  });
}

template <typename V>
void swiglu(const float *gate, const float *up, float *y, int64_t n) {
  overVectors<V>(n, [&](int64_t i, auto loadAt, auto storeAt) {
    V g = loadAt(gate + i);
    V u = loadAt(up + i);
    storeAt(y + i, mul(siluFrom(g, sigmoidOf(g)), u));
  });
}

template <typename V>
void swigluGrad(const float *dy, const float *gate, const float *up,
                float *dgate, float *dup, int64_t n) {
  overVectors<V>(n, [&](int64_t i, auto loadAt, auto storeAt) {
    V g = loadAt(gate + i);
    V d = loadAt(dy + i);
    V u = loadAt(up + i);
    V s = sigmoidOf(g);
    storeAt(dup + i, mul(d, siluFrom(g, s)));
    storeAt(dgate + i, mul(mul(d, u), siluDerivative(g, s)));
  });
}

} // namespace pdrt::silu::lanes

#undef PDRT_SILU_INLINE

#endif // PDRT_CPU_SILU_LANES_H
