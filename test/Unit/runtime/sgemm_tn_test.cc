//===- sgemm_tn_test.cc - pdrt_matmul's paths for A^T B -------------------===//
//
// pdrt_matmul's paths for A^T B (cpu/sgemm_tn.h): the transposed one against
// double products for beta 0 (NaN in C ignored), 1 (a weight gradient
// accumulated) and other betas, with alpha, in one chunk and in chunks with
// a tail; the OpenBLAS one; and the shapes each is chosen for.
//
//===----------------------------------------------------------------------===//

#include "cpu/sgemm_tn.h"
#include "exec/context.h"
#include "pdrt/pdrt.h"

#include "random_data.h"

#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

namespace {

using pdtest::randomVector;

/// alpha A^T B + beta C0 in double (beta == 0 ignores C0).
std::vector<double> reference(const std::vector<float> &a,
                              const std::vector<float> &b,
                              const std::vector<float> &c0, int64_t m,
                              int64_t n, int64_t k, float alpha, float beta) {
  std::vector<double> want(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += (double)a[p * m + i] * b[p * n + j];
      want[i * n + j] = alpha * s + (beta == 0.0f ? 0.0 : beta * (double)c0[i * n + j]);
    }
  return want;
}

void expectClose(const std::vector<float> &got, const std::vector<double> &want,
                 const char *what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-4 * (1.0 + std::fabs(want[i])))
        << what << " at " << i;
}

TEST(SgemmTN, PathFollowsTheMeasuredShapes) {
  using pdrt::TNPath;
  EXPECT_EQ(pdrt::chooseTNPath(4096, 256), TNPath::Transposed); // LM head dW
  EXPECT_EQ(pdrt::chooseTNPath(1024, 256), TNPath::Transposed); // MLP up dW
  EXPECT_EQ(pdrt::chooseTNPath(2048, 512), TNPath::Transposed);
  EXPECT_EQ(pdrt::chooseTNPath(1024, 768), TNPath::Transposed);
  EXPECT_EQ(pdrt::chooseTNPath(1536, 512), TNPath::OpenBLAS); // QKV dW, h 512
  EXPECT_EQ(pdrt::chooseTNPath(2560, 512), TNPath::OpenBLAS);
  EXPECT_EQ(pdrt::chooseTNPath(1536, 384), TNPath::Transposed);
  EXPECT_EQ(pdrt::chooseTNPath(2304, 512), TNPath::Direct);  // not aliased
  EXPECT_EQ(pdrt::chooseTNPath(256, 1024), TNPath::Direct);  // MLP down dW
  EXPECT_EQ(pdrt::chooseTNPath(768, 256), TNPath::Direct);   // small m
  EXPECT_EQ(pdrt::chooseTNPath(8192, 768), TNPath::Direct);  // wide n
  EXPECT_EQ(pdrt::chooseTNPath(3072, 1024), TNPath::Direct);
}

/// pdrt_matmul's A^T B of m x n x k on random operands against double, for
/// each beta (NaN in C ignored at beta 0), after checking which path the
/// shape takes; the plan's manifest puts the shape on OpenBLAS for that
/// path, else on oneDNN (whose default may be OpenBLAS on this CPU).
void expectMatmulTN(int64_t m, int64_t n, int64_t k, float alpha,
                    std::initializer_list<float> betas, pdrt::TNPath path,
                    unsigned seed) {
  ASSERT_EQ(pdrt::chooseTNPath(m, n), path);
  pdrt::Manifest manifest;
  manifest.gemmLibraries[{m, n, k, true, false}] =
      path == pdrt::TNPath::OpenBLAS ? pdrt::GemmLibrary::OpenBLAS
                                     : pdrt::GemmLibrary::OneDNN;
  pdrt_ctx ctx;
  ctx.manifest = &manifest;
  std::vector<float> a = randomVector(m * k, seed),
                     b = randomVector(k * n, seed + 1),
                     c0 = randomVector(m * n, seed + 2);
  for (float beta : betas) {
    std::vector<float> c = c0;
    if (beta == 0.0f)
      c.assign(m * n, std::numeric_limits<float>::quiet_NaN());
    pdrt_matmul(&ctx, a.data(), b.data(), c.data(), m, n, k, 1, 0, alpha,
                beta);
    ASSERT_FALSE(ctx.failed) << ctx.error;
    expectClose(c, reference(a, b, c0, m, n, k, alpha, beta),
                ("beta " + std::to_string(beta)).c_str());
  }
}

TEST(SgemmTN, MatmulThroughOpenBLASWithAlphaAndBeta) {
  expectMatmulTN(1536, 512, 3, 0.5f, {0.0f, 1.0f}, pdrt::TNPath::OpenBLAS, 11);
}

TEST(SgemmTN, MatmulTakesThePathWithAlphaAndBeta) {
  // m and n off the 64-column blocks; k past a GEMM block.
  expectMatmulTN(1100, 37, 300, 1.5f, {0.0f, 1.0f, -0.5f},
                 pdrt::TNPath::Transposed, 1);
}

TEST(SgemmTN, ChunksWithATailAndStridedOperands) {
  // 100 x 3 floats of scratch: chunks of 64 rows of C, a tail of 8; A and B
  // inside wider rows, C inside wider rows (the columns past n untouched).
  const int64_t m = 200, n = 3, k = 9, lda = 210, ldb = 5, ldc = 6;
  std::vector<float> aw = randomVector(k * lda, 4), bw = randomVector(k * ldb, 5);
  std::vector<float> a(k * m), b(k * n), c0 = randomVector(m * n, 6);
  for (int64_t p = 0; p < k; ++p) {
    for (int64_t i = 0; i < m; ++i)
      a[p * m + i] = aw[p * lda + i];
    for (int64_t j = 0; j < n; ++j)
      b[p * n + j] = bw[p * ldb + j];
  }
  for (float beta : {0.0f, 1.0f}) {
    std::vector<float> cw(m * ldc, 7.0f);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        cw[i * ldc + j] = c0[i * n + j];
    ASSERT_TRUE(pdrt::sgemmTNThroughTranspose(m, n, k, 0.5f, aw.data(), lda,
                                              bw.data(), ldb, beta, cw.data(),
                                              ldc, 100 * n));
    std::vector<float> c(m * n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < ldc; ++j) {
        if (j < n)
          c[i * n + j] = cw[i * ldc + j];
        else
          ASSERT_EQ(cw[i * ldc + j], 7.0f) << "row " << i << " column " << j;
      }
    expectClose(c, reference(a, b, c0, m, n, k, 0.5f, beta),
                beta == 0.0f ? "beta 0" : "beta 1");
  }
}

} // namespace
