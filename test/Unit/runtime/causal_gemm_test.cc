//===- causal_gemm_test.cc - pdrt_batch_matmul_strided's triangles ---------===//
//
// The batched GEMM, dense and in its causal triangles (pdrt_codes.h
// pdrt_triangle), against a double-precision product, for every transpose
// of A and B and sizes below, at and across the block (PDRT_CAUSAL_BLOCK),
// with op(B) small (libxsmm's kernels, small_gemm.h) and large (oneDNN's):
// the lower triangle of a PDRT_RESULT_LOWER product is exact and the
// blocks above the diagonal blocks keep what C held; a PDRT_LHS_LOWER /
// PDRT_LHS_UPPER product whose op(A) holds NaN in the blocks it may skip
// (zeros in its diagonal blocks) equals the product with zeros there, so
// those blocks are never read. B is stored contiguously or with NaN
// padding past each row (a leading dimension above its row length, as
// attention's K and V read in place from the QKV projection), which the
// libxsmm path copies out first and must never read.
//
//===----------------------------------------------------------------------===//

#include "pdrt/pdrt.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const int64_t kBatch = 2;

std::vector<float> randomMatrices(int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(kBatch * n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

/// A GEMM C[b] = op(A[b]) op(B[b]) of kBatch matrices stored one after
/// the other, row-major, through pdrt_batch_matmul_strided.
struct Case {
  int64_t m, n, k;
  bool ta, tb;
  /// Floats of padding past each stored row of B.
  int64_t padB = 0;

  int64_t lda() const { return ta ? m : k; }
  int64_t ldb() const { return (tb ? k : n) + padB; }
  /// One stored B: its rows (n if transposed, else k) of ldb floats.
  int64_t bStride() const { return (tb ? n : k) * ldb(); }
  /// op(A)[i, p] and op(B)[p, j] of matrix b.
  float &a(std::vector<float> &x, int64_t b, int64_t i, int64_t p) const {
    return x[b * m * k + (ta ? p * lda() + i : i * lda() + p)];
  }
  float bAt(const std::vector<float> &x, int64_t b, int64_t p, int64_t j) const {
    return x[b * bStride() + (tb ? j * ldb() + p : p * ldb() + j)];
  }
  /// Random A and B (from `seed`) and a C that holds 7 everywhere.
  struct Operands {
    std::vector<float> a, b, c;
  };
  Operands operands(unsigned seed) const {
    std::vector<float> b = randomMatrices(bStride(), seed + 1);
    for (size_t at = 0; at < b.size(); ++at)
      if (int64_t(at % ldb()) >= ldb() - padB)
        b[at] = kNaN;
    return {randomMatrices(m * k, seed), b,
            std::vector<float>(kBatch * m * n, 7.0f)};
  }
  void run(const std::vector<float> &a, const std::vector<float> &b,
           std::vector<float> &c, int triangle) const {
    const int64_t desc[] = {1,  kBatch, m * k, bStride(), m * n, m,   n,
                            k,  ta,     tb,    lda(),     ldb(), n, triangle};
    pdrt_batch_matmul_strided(nullptr, a.data(), b.data(), c.data(), desc);
  }
  /// Float rounding of a k-term product against the double one.
  double tolerance() const { return 1e-5 + 1e-6 * k; }
  double product(std::vector<float> &a, const std::vector<float> &b, int64_t at,
                 int64_t i, int64_t j) const {
    double s = 0;
    for (int64_t p = 0; p < k; ++p)
      s += (double)this->a(a, at, i, p) * bAt(b, at, p, j);
    return s;
  }
};

int64_t blockOf(int64_t i) { return i / PDRT_CAUSAL_BLOCK * PDRT_CAUSAL_BLOCK; }

class CausalGemm
    : public ::testing::TestWithParam<
          std::tuple<int64_t, bool, bool, bool, bool>> {
protected:
  int64_t t() const { return std::get<0>(GetParam()); }
  bool ta() const { return std::get<1>(GetParam()); }
  bool tb() const { return std::get<2>(GetParam()); }
  int64_t padB() const { return std::get<4>(GetParam()) ? 3 : 0; }
  Case gemm(int64_t m, int64_t n, int64_t k) const {
    return {m, n, k, ta(), tb(), padB()};
  }
  /// op(B) above small_gemm.h's 128 Ki floats, the oneDNN path, by making
  /// its other side (k or n) this long; else `small`, libxsmm's path.
  int64_t otherSide(int64_t small) const {
    return std::get<3>(GetParam()) ? (int64_t(128) << 10) / t() + 1 : small;
  }
};

TEST_P(CausalGemm, ResultLowerWritesTheLowerTriangle) {
  Case g = gemm(t(), t(), otherSide(24));
  auto [a, b, c] = g.operands(1);
  g.run(a, b, c, PDRT_RESULT_LOWER);
  for (int64_t at = 0; at < kBatch; ++at)
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        float got = c[(at * g.m + i) * g.n + j];
        if (j <= i)
          EXPECT_NEAR(got, g.product(a, b, at, i, j), g.tolerance()) << i << "," << j;
        else if (i < blockOf(j))
          EXPECT_EQ(got, 7.0f) << "skipped block written at " << i << "," << j;
      }
}

TEST_P(CausalGemm, DenseComputesTheWholeProduct) {
  Case g = gemm(t(), otherSide(19), t());
  auto [a, b, c] = g.operands(5);
  g.run(a, b, c, PDRT_DENSE);
  for (int64_t at = 0; at < kBatch; ++at)
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j)
        EXPECT_NEAR(c[(at * g.m + i) * g.n + j], g.product(a, b, at, i, j),
                    g.tolerance())
            << i << "," << j;
}

/// op(A) triangular: zero on the wrong side of the diagonal inside the
/// diagonal blocks, NaN in the blocks beyond, which must not be read.
void expectTriangularLhs(Case g, bool lower) {
  auto [a, b, c] = g.operands(3);
  std::vector<float> zeroed = a;
  for (int64_t at = 0; at < kBatch; ++at)
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t p = 0; p < g.k; ++p) {
        bool zero = lower ? p > i : p < i;
        if (!zero)
          continue;
        g.a(zeroed, at, i, p) = 0.0f;
        g.a(a, at, i, p) = blockOf(p) == blockOf(i) ? 0.0f : kNaN;
      }
  g.run(a, b, c, lower ? PDRT_LHS_LOWER : PDRT_LHS_UPPER);
  for (int64_t at = 0; at < kBatch; ++at)
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j)
        EXPECT_NEAR(c[(at * g.m + i) * g.n + j], g.product(zeroed, b, at, i, j),
                    g.tolerance())
            << i << "," << j;
}

TEST_P(CausalGemm, LhsLowerSkipsTheBlocksAboveTheDiagonal) {
  expectTriangularLhs(gemm(t(), otherSide(19), t()), /*lower=*/true);
}

TEST_P(CausalGemm, LhsUpperSkipsTheBlocksBelowTheDiagonal) {
  expectTriangularLhs(gemm(t(), otherSide(19), t()), /*lower=*/false);
}

INSTANTIATE_TEST_SUITE_P(
    SizesAndTransposes, CausalGemm,
    ::testing::Combine(::testing::Values(5, PDRT_CAUSAL_BLOCK, 70),
                       ::testing::Bool(), ::testing::Bool(),
                       ::testing::Bool(), ::testing::Bool()));

} // namespace
