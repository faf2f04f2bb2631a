//===- grouped_gemm_test.cc - Batched GEMMs over shared heads -------------===//
//
// pdrt_batch_matmul_strided with grouped-query attention's batch split
// into (kv heads, groups): B read through a zero stride along the groups
// (every query head of a group multiplies its group's K or V) and C
// stepping 0 along them (a group's products summed into one C, the first
// entry writing over what C held, dense and under a causal triangle whose
// skipped blocks must not be read), on libxsmm's path (op(B) small) and
// oneDNN's (large), against double-precision sums; and attention's
// grouped backward recorded in an interleaved group, which runs entry by
// entry and gives the bits of the kernels run whole.
//
//===----------------------------------------------------------------------===//

#include "pdrt/pdrt.h"

#include "exec/context.h"
#include "random_data.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace {

constexpr int64_t Kv = 2, G = 3, H = Kv * G;

/// A descriptor over (Kv, G) of row-major m x k by k x n products, op(A)
/// = A^T when `ta`; each operand's and C's strides along the two dims.
std::vector<int64_t> desc(std::array<int64_t, 2> as, std::array<int64_t, 2> bs,
                          std::array<int64_t, 2> cs, int64_t m, int64_t n,
                          int64_t k, bool ta, int triangle) {
  return {2, Kv, G, as[0], as[1], bs[0],      bs[1], cs[0], cs[1],
          m, n,  k, ta,    0,     ta ? m : k, n,     n,     triangle};
}

/// The double-precision op(A[e]) B[f] at (i, j).
double product(const std::vector<float> &a, const std::vector<float> &b,
               int64_t e, int64_t f, int64_t m, int64_t n, int64_t k, bool ta,
               int64_t i, int64_t j) {
  double s = 0;
  for (int64_t p = 0; p < k; ++p)
    s += (double)a[e * m * k + (ta ? p * m + i : i * k + p)] *
         b[f * k * n + p * n + j];
  return s;
}

class GroupedGemm : public ::testing::TestWithParam<bool> {
protected:
  /// n: small (libxsmm) or op(B) above 128 Ki floats (oneDNN).
  int64_t n() const { return GetParam() ? (int64_t(128) << 10) / 40 + 1 : 24; }
};

TEST_P(GroupedGemm, SharedRhsReadsItsGroupsEntry) {
  const int64_t m = 37, k = 40, n = this->n();
  std::vector<float> a = pdtest::randomVector(H * m * k, 1),
                     b = pdtest::randomVector(Kv * k * n, 2),
                     c(H * m * n, 7.0f);
  auto d = desc({G * m * k, m * k}, {k * n, 0}, {G * m * n, m * n}, m, n, k,
                false, PDRT_DENSE);
  pdrt_batch_matmul_strided(nullptr, a.data(), b.data(), c.data(), d.data());
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; j += 7)
        EXPECT_NEAR(c[(h * m + i) * n + j],
                    product(a, b, h, h / G, m, n, k, false, i, j), 1e-4)
            << h << ": " << i << "," << j;
}

/// C[kv] = sum over the group of op(A[h]) B[h], h = kv G .. kv G + G - 1.
void expectGroupSum(int64_t m, int64_t n, int64_t k, bool ta, int triangle) {
  std::vector<float> a = pdtest::randomVector(H * m * k, 3),
                     b = pdtest::randomVector(H * k * n, 4),
                     c(Kv * m * n, 7.0f);
  std::vector<float> zeroed = a;
  if (triangle == PDRT_LHS_UPPER) {
    // op(A) upper triangular: zeros below the diagonal inside the diagonal
    // blocks, NaN in the blocks below them, which must not be read.
    for (int64_t e = 0; e < H; ++e)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t p = 0; p < i; ++p) {
          int64_t at = e * m * k + (ta ? p * m + i : i * k + p);
          zeroed[at] = 0.0f;
          a[at] = p / PDRT_CAUSAL_BLOCK == i / PDRT_CAUSAL_BLOCK
                      ? 0.0f
                      : std::numeric_limits<float>::quiet_NaN();
        }
  }
  auto d = desc({G * m * k, m * k}, {G * k * n, k * n}, {m * n, 0}, m, n, k, ta,
                triangle);
  pdrt_batch_matmul_strided(nullptr, a.data(), b.data(), c.data(), d.data());
  for (int64_t kv = 0; kv < Kv; ++kv)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; j += 7) {
        double sum = 0;
        for (int64_t h = kv * G; h < kv * G + G; ++h)
          sum += product(zeroed, b, h, h, m, n, k, ta, i, j);
        EXPECT_NEAR(c[(kv * m + i) * n + j], sum, 1e-4)
            << kv << ": " << i << "," << j;
      }
}

TEST_P(GroupedGemm, ResultGroupsSumTheirProducts) {
  expectGroupSum(37, n(), 40, /*ta=*/false, PDRT_DENSE);
}

TEST_P(GroupedGemm, ResultGroupsSumUnderACausalTriangle) {
  // dK = dS^T Q: op(A) = dS^T upper triangular, square (m = k).
  expectGroupSum(70, n(), 70, /*ta=*/true, PDRT_LHS_UPPER);
}

INSTANTIATE_TEST_SUITE_P(SmallAndLarge, GroupedGemm, ::testing::Bool());

TEST(GroupedGemm, GroupedAttentionBackwardRunsByEntriesWithTheWholeBits) {
  // Per (kv, g) entry: dP = dO V^T (V shared), dK = dS^T Q and dV = P^T dO
  // summed over the group, dQ = dS K (K shared); [T, D] and [T, T] blocks
  // one after the other.
  constexpr int64_t T = 64, D = 16;
  std::vector<float> probs = pdtest::randomVector(H * T * T, 5),
                     ds = pdtest::randomVector(H * T * T, 6),
                     q = pdtest::randomVector(H * T * D, 7),
                     dout = pdtest::randomVector(H * T * D, 8),
                     k = pdtest::randomVector(Kv * T * D, 9),
                     v = pdtest::randomVector(Kv * T * D, 10);
  const std::array<int64_t, 2> heads{G * T * D, T * D}, shared{T * D, 0},
      scores{G * T * T, T * T}, summed{T * D, 0};
  std::vector<std::vector<int64_t>> d{
      desc(heads, shared, scores, T, T, D, false, PDRT_DENSE),
      desc(scores, heads, summed, T, D, T, true, PDRT_LHS_UPPER),
      desc(scores, heads, summed, T, D, T, true, PDRT_LHS_UPPER),
      desc(scores, shared, heads, T, D, T, false, PDRT_LHS_LOWER)};
  // dP's B is V^T: transposed, its ld D.
  d[0][13] = 1, d[0][15] = D;
  auto run = [&](pdrt_ctx *ctx, std::vector<float> &dp, std::vector<float> &dk,
                 std::vector<float> &dv, std::vector<float> &dq) {
    pdrt_batch_matmul_strided(ctx, dout.data(), v.data(), dp.data(),
                              d[0].data());
    pdrt_batch_matmul_strided(ctx, ds.data(), q.data(), dk.data(), d[1].data());
    pdrt_batch_matmul_strided(ctx, probs.data(), dout.data(), dv.data(),
                              d[2].data());
    pdrt_batch_matmul_strided(ctx, ds.data(), k.data(), dq.data(), d[3].data());
  };
  std::vector<float> dp0(H * T * T), dk0(Kv * T * D, 7.0f),
      dv0(Kv * T * D, 7.0f), dq0(H * T * D);
  std::vector<float> dp1 = dp0, dk1 = dk0, dv1 = dv0, dq1 = dq0;
  run(nullptr, dp0, dk0, dv0, dq0);
  pdrt_ctx ctx;
  pdrt_interleave_begin(&ctx);
  run(&ctx, dp1, dk1, dv1, dq1);
  pdrt_interleave_end(&ctx);
  ASSERT_FALSE(ctx.failed) << ctx.error;
  ASSERT_EQ(1u, ctx.interleaved.checked.size());
  EXPECT_TRUE(ctx.interleaved.checked.begin()->second) << "ran whole";
  for (auto [whole, grouped] : {std::pair(&dp0, &dp1), std::pair(&dk0, &dk1),
                                std::pair(&dv0, &dv1), std::pair(&dq0, &dq1)})
    EXPECT_EQ(0, std::memcmp(whole->data(), grouped->data(),
                             whole->size() * sizeof(float)));
}

} // namespace
