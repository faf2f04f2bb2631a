//===- layer_norm_avx2.cc - Layer norm rows on AVX2 + FMA -----------------===//
//
// layer_norm_avx512.cc's scheme on 8-float vectors, built with
// -ffp-contract=off (runtime/CMakeLists.txt) so that every fused
// multiply-add is written as one and a row's bits are the same whichever
// optional operands a call has. A row is taken 16 floats at a time: two
// vectors, each sum in two accumulators of four doubles per vector (four
// independent chains), then a last whole vector, then the partial one
// through a masked load whose absent lanes add zero. Plain loads and
// stores everywhere but that last vector: a masked store costs several
// plain ones on AMD's cores. The statistics take one pass (sums of x and
// x^2), the gradient two (its row sums with dg and db, then dx).
//
// It replaced nn.cc's generic form (four-float vectors widened to double,
// two passes for the statistics, three for the gradient). On a Zen 3 EPYC
// (bench/kernels/run.sh onednn_kernels ln, warm) the small GPT's 1024 x
// 256 norms went from 0.109-0.117 / 0.194-0.203 ms forward / backward to
// 0.079-0.083 / 0.168-0.173 (oneDNN's primitive 0.074-0.080 /
// 0.138-0.156, its backward reading the forward's statistics); in the
// small GPT's step (--profile-ops) the layer-norm gradients from 16.1 to
// 8.2 ms per step, the fused add + norms from 10.6 to 8.5.
//
//===----------------------------------------------------------------------===//

#include "layer_norm.h"

#include "avx2_lanes.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace pdrt::layer_norm::avx2 {

namespace {

/// Loads and stores of a whole vector.
struct AllLanes {
  __m256 load(const float *p) const { return _mm256_loadu_ps(p); }
  void store(float *p, __m256 v) const { _mm256_storeu_ps(p, v); }
};

/// Loads and stores of a row's last, partial vector: `left` lanes (1-7);
/// the others load as 0 and are not stored.
struct SomeLanes {
  __m256i mask;
  explicit SomeLanes(int64_t left) : mask(pdrt::avx2::laneMask(left)) {}
  __m256 load(const float *p) const { return _mm256_maskload_ps(p, mask); }
  void store(float *p, __m256 v) const { _mm256_maskstore_ps(p, mask, v); }
};

using pdrt::avx2::highHalf;
using pdrt::avx2::lowHalf;

/// A sum in double of the 8 lanes of vectors: lanes 0-3 and 4-7 into two
/// accumulators.
struct DoubleSum {
  __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
  void add(__m256 v) {
    lo = _mm256_add_pd(lo, lowHalf(v));
    hi = _mm256_add_pd(hi, highHalf(v));
  }
  /// Adds the squares of v's lanes in double (exact products).
  void addSquares(__m256 v) {
    __m256d l = lowHalf(v), h = highHalf(v);
    lo = _mm256_fmadd_pd(l, l, lo);
    hi = _mm256_fmadd_pd(h, h, hi);
  }
};

/// The total of two DoubleSums (the row's even and odd vectors).
double total(const DoubleSum (&s)[2]) {
  __m256d even = _mm256_add_pd(s[0].lo, s[0].hi);
  __m256d odd = _mm256_add_pd(s[1].lo, s[1].hi);
  __m256d v = _mm256_add_pd(even, odd);
  __m128d pair = _mm_add_pd(_mm256_castpd256_pd128(v),
                            _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(pair, _mm_unpackhi_pd(pair, pair)));
}

using Even = std::integral_constant<int, 0>;
using Odd = std::integral_constant<int, 1>;

/// f(c, lanes, parity) over the row's vectors: whole pairs, a whole one,
/// then the partial one; parity a compile-time 0 or 1 that picks the
/// vector's accumulator.
template <typename F> inline void overRow(int64_t cols, F f) {
  int64_t c = 0;
  for (; c + 16 <= cols; c += 16) {
    f(c, AllLanes{}, Even{});
    f(c + 8, AllLanes{}, Odd{});
  }
  if (c + 8 <= cols) {
    f(c, AllLanes{}, Even{});
    c += 8;
  }
  if (c < cols)
    f(c, SomeLanes(cols - c), Odd{});
}

} // namespace

void rowStats(const float *x, int64_t cols, float eps, float *mean,
              float *rstd) {
  // One pass, as layer_norm_avx512.cc's (which says why it is accurate).
  DoubleSum s[2], q[2];
  overRow(cols, [&](int64_t c, auto lanes, auto k) {
    __m256 v = lanes.load(x + c);
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
  const __m256 mu = _mm256_set1_ps(mean), r = _mm256_set1_ps(rstd);
  overRow(cols, [&](int64_t c, auto lanes, auto) {
    __m256 xhat = _mm256_mul_ps(_mm256_sub_ps(lanes.load(x + c), mu), r);
    lanes.store(y + c,
                _mm256_fmadd_ps(xhat, lanes.load(g + c), lanes.load(b + c)));
  });
}

void addRow(const float *a, const float *b, const float *bias, float *sum,
            int64_t cols) {
  overRow(cols, [&](int64_t c, auto lanes, auto) {
    __m256 rhs = lanes.load(b + c);
    if (bias)
      rhs = _mm256_add_ps(rhs, lanes.load(bias + c));
    lanes.store(sum + c, _mm256_add_ps(lanes.load(a + c), rhs));
  });
}

void gradRow(const float *dy, const float *x, const float *g,
             const float *addend, float *dx, float *dg, float *db,
             float *dsum, int64_t cols, float mean, float rstd) {
  const __m256 mu = _mm256_set1_ps(mean), r = _mm256_set1_ps(rstd);
  // As layer_norm_avx512.cc's: db and dg gather dy and dy xhat; the row
  // sums of dn = dy g and dn xhat (each term rounded to float) give dx.
  DoubleSum sumDn[2], sumDnX[2];
  overRow(cols, [&](int64_t c, auto lanes, auto k) {
    __m256 dyv = lanes.load(dy + c);
    __m256 xhat = _mm256_mul_ps(_mm256_sub_ps(lanes.load(x + c), mu), r);
    __m256 dn = _mm256_mul_ps(dyv, lanes.load(g + c));
    lanes.store(db + c, _mm256_add_ps(lanes.load(db + c), dyv));
    lanes.store(dg + c, _mm256_fmadd_ps(dyv, xhat, lanes.load(dg + c)));
    sumDn[k].add(dn);
    sumDnX[k].add(_mm256_mul_ps(dn, xhat));
  });
  const __m256 meanDn = _mm256_set1_ps((float)(total(sumDn) / cols));
  const __m256 meanDnX = _mm256_set1_ps((float)(total(sumDnX) / cols));
  overRow(cols, [&](int64_t c, auto lanes, auto) {
    __m256 xhat = _mm256_mul_ps(_mm256_sub_ps(lanes.load(x + c), mu), r);
    __m256 dn = _mm256_mul_ps(lanes.load(dy + c), lanes.load(g + c));
    __m256 inner = _mm256_sub_ps(_mm256_sub_ps(dn, meanDn),
                                 _mm256_mul_ps(xhat, meanDnX));
    __m256 d = _mm256_mul_ps(r, inner);
    if (addend)
      d = _mm256_add_ps(lanes.load(addend + c), d);
    lanes.store(dx + c, d);
    if (dsum)
      lanes.store(dsum + c, _mm256_add_ps(lanes.load(dsum + c), d));
  });
}

} // namespace pdrt::layer_norm::avx2
