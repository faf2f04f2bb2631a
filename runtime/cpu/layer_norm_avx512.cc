//===- layer_norm_avx512.cc - Layer norm rows on AVX-512 ------------------===//
//
// Built with -mavx512f -mavx512dq -ffp-contract=off (runtime/CMakeLists.txt):
// every fused multiply-add is written as one, so a row's bits are the same
// whichever optional operands a call has (the gradient with an addend is
// the plain gradient plus the addend, rounded twice, as pd.add would).
// A row is taken 32 floats at a time: two vectors, each sum in two
// accumulators of eight doubles per vector (four independent chains), the
// last partial vector through a masked load whose absent lanes add zero.
// The statistics take one pass (sums of x and x^2), the gradient two (its
// row sums with dg and db, then dx). On the small benchmark GPT's
// 1024 x 256 norms (Ice Lake Xeon, loaded host, warm; bench/kernels/run.sh
// onednn_kernels ln) the forward takes 0.07-0.11 ms and the backward
// 0.15-0.22, against 0.11 and 0.23 for the generic AVX2 kernels nn.cc
// had then (four floats widened at a time, two passes for the
// statistics) and 0.08-0.09 and 0.18-0.20 for oneDNN's primitive; in a step (--profile-ops) the small
// GPT's layer-norm gradients went from 4.0-5.1 to 2.6-2.8 ms per
// microbatch.
//
//===----------------------------------------------------------------------===//

#include "layer_norm.h"

#include "avx512_lanes.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace pdrt::layer_norm::avx512 {

namespace {

using pdrt::avx512::highHalf;
using pdrt::avx512::kAllLanes;
using pdrt::avx512::laneMask;
using pdrt::avx512::lowHalf;

inline __m512 load(const float *p, __mmask16 m) {
  return _mm512_maskz_loadu_ps(m, p);
}

/// A sum in double of the 16 lanes of vectors: lanes 0-7 and 8-15 into two
/// accumulators.
struct DoubleSum {
  __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
  void add(__m512 v) {
    lo = _mm512_add_pd(lo, lowHalf(v));
    hi = _mm512_add_pd(hi, highHalf(v));
  }
  /// Adds the squares of v's lanes in double (exact products).
  void addSquares(__m512 v) {
    __m512d l = lowHalf(v), h = highHalf(v);
    lo = _mm512_fmadd_pd(l, l, lo);
    hi = _mm512_fmadd_pd(h, h, hi);
  }
};

/// The total of two DoubleSums (the row's even and odd vectors).
double total(const DoubleSum (&s)[2]) {
  __m512d even = _mm512_add_pd(s[0].lo, s[0].hi);
  __m512d odd = _mm512_add_pd(s[1].lo, s[1].hi);
  return _mm512_reduce_add_pd(_mm512_add_pd(even, odd));
}

using Even = std::integral_constant<int, 0>;
using Odd = std::integral_constant<int, 1>;

/// f(c, mask, parity) over the row's vectors: whole pairs, then the rest
/// (the last one masked), parity a compile-time 0 or 1 that picks the
/// vector's accumulator.
template <typename F> inline void overRow(int64_t cols, F f) {
  int64_t c = 0;
  for (; c + 32 <= cols; c += 32) {
    f(c, kAllLanes, Even{});
    f(c + 16, kAllLanes, Odd{});
  }
  for (; c < cols; c += 16)
    f(c, laneMask(cols - c), Even{});
}

} // namespace

void rowStats(const float *x, int64_t cols, float eps, float *mean,
              float *rstd) {
  // One pass: the sums of x and x^2 in double. The squares of floats are
  // exact in double, and E[x^2] - mean^2 cancels at most the digits that
  // mean^2 / var holds: 1e-10 relative at a mean 1000 standard deviations
  // from 0, far below the float result's rounding.
  DoubleSum s[2], q[2];
  overRow(cols, [&](int64_t c, __mmask16 m, auto k) {
    __m512 v = load(x + c, m);
    s[k].add(v);
    q[k].addSquares(v);
  });
  const double mu = total(s) / cols;
  const double var = std::max(total(q) / cols - mu * mu, 0.0);
  *mean = (float)mu;
  *rstd = (float)(1.0 / std::sqrt(var + eps));
}

void normalizeRow(const float *x, const float *g, const float *b, float *y,
                  int64_t cols, float mean, float rstd) {
  const __m512 mu = _mm512_set1_ps(mean), r = _mm512_set1_ps(rstd);
  overRow(cols, [&](int64_t c, __mmask16 m, auto) {
    __m512 xhat = _mm512_mul_ps(_mm512_sub_ps(load(x + c, m), mu), r);
    _mm512_mask_storeu_ps(y + c, m,
                          _mm512_fmadd_ps(xhat, load(g + c, m), load(b + c, m)));
  });
}

void addRow(const float *a, const float *b, const float *bias, float *sum,
            int64_t cols) {
  overRow(cols, [&](int64_t c, __mmask16 m, auto) {
    __m512 rhs = load(b + c, m);
    if (bias)
      rhs = _mm512_add_ps(rhs, load(bias + c, m));
    _mm512_mask_storeu_ps(sum + c, m, _mm512_add_ps(load(a + c, m), rhs));
  });
}

void gradRow(const float *dy, const float *x, const float *g,
             const float *addend, float *dx, float *dg, float *db,
             float *dsum, int64_t cols, float mean, float rstd) {
  const __m512 mu = _mm512_set1_ps(mean), r = _mm512_set1_ps(rstd);
  // The forward computed y = xhat g + b, xhat = (x - mean) rstd: db and dg
  // gather dy and dy xhat; the row sums of dn = dy g and dn xhat (each
  // term rounded to float) give dx.
  DoubleSum sumDn[2], sumDnX[2];
  overRow(cols, [&](int64_t c, __mmask16 m, auto k) {
    __m512 dyv = load(dy + c, m);
    __m512 xhat = _mm512_mul_ps(_mm512_sub_ps(load(x + c, m), mu), r);
    __m512 dn = _mm512_mul_ps(dyv, load(g + c, m));
    _mm512_mask_storeu_ps(db + c, m, _mm512_add_ps(load(db + c, m), dyv));
    _mm512_mask_storeu_ps(dg + c, m,
                          _mm512_fmadd_ps(dyv, xhat, load(dg + c, m)));
    sumDn[k].add(dn);
    sumDnX[k].add(_mm512_mul_ps(dn, xhat));
  });
  const __m512 meanDn = _mm512_set1_ps((float)(total(sumDn) / cols));
  const __m512 meanDnX = _mm512_set1_ps((float)(total(sumDnX) / cols));
  overRow(cols, [&](int64_t c, __mmask16 m, auto) {
    __m512 xhat = _mm512_mul_ps(_mm512_sub_ps(load(x + c, m), mu), r);
    __m512 dn = _mm512_mul_ps(load(dy + c, m), load(g + c, m));
    __m512 inner = _mm512_sub_ps(_mm512_sub_ps(dn, meanDn),
                                 _mm512_mul_ps(xhat, meanDnX));
    __m512 d = _mm512_mul_ps(r, inner);
    if (addend)
      d = _mm512_add_ps(load(addend + c, m), d);
    _mm512_mask_storeu_ps(dx + c, m, d);
    if (dsum)
      _mm512_mask_storeu_ps(dsum + c, m, _mm512_add_ps(load(dsum + c, m), d));
  });
}

} // namespace pdrt::layer_norm::avx512
