//===- gemm_library_test.cc - Which library runs a pdrt_matmul ------------===//
//
// cpu/gemm_library.h: the manifest's measured choice per shape wins over
// the default, the default sends A^T B to OpenBLAS where oneDNN is slow on
// it, both libraries compute every transpose combination with alpha and
// beta (against double), and a profiled op lists the shapes it ran.
//
//===----------------------------------------------------------------------===//

#include "cpu/gemm_library.h"
#include "cpu/sgemm_tn.h"
#include "cpu/vmath.h"
#include "exec/context.h"
#include "pdrt/pdrt.h"

#include "random_data.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace {

using pdrt::GemmLibrary;
using pdrt::GemmShape2D;
using pdtest::randomVector;

/// A stage context whose manifest puts `shape` on `library`.
struct ContextWithChoice {
  pdrt::Manifest manifest;
  pdrt_ctx ctx;
  ContextWithChoice(const GemmShape2D &shape, GemmLibrary library) {
    manifest.gemmLibraries[shape] = library;
    ctx.manifest = &manifest;
  }
};

TEST(GemmLibrary, Names) {
  EXPECT_EQ(pdrt::gemmLibraryNamed("onednn"), GemmLibrary::OneDNN);
  EXPECT_EQ(pdrt::gemmLibraryNamed("openblas"), GemmLibrary::OpenBLAS);
  EXPECT_FALSE(pdrt::gemmLibraryNamed("mkl"));
  EXPECT_FALSE(pdrt::gemmLibraryNamed(""));
}

TEST(GemmLibrary, DefaultIsOneDNNOnlyWithAvx512) {
  GemmLibrary fast = pdrt::vmath::cpuHasAvx512() ? GemmLibrary::OneDNN
                                                  : GemmLibrary::OpenBLAS;
  EXPECT_EQ(pdrt::defaultGemmLibrary({1024, 256, 256, false, false}), fast);
  EXPECT_EQ(pdrt::defaultGemmLibrary({1024, 256, 256, true, true}), fast);
  // The MLP's weight gradient: oneDNN through its transpose with AVX-512.
  EXPECT_EQ(pdrt::defaultGemmLibrary({1024, 256, 1024, true, false}), fast);
  // sgemm_tn.h's aliasing shape goes to OpenBLAS on every CPU.
  ASSERT_EQ(pdrt::chooseTNPath(1536, 512), pdrt::TNPath::OpenBLAS);
  EXPECT_EQ(pdrt::defaultGemmLibrary({1536, 512, 64, true, false}),
            GemmLibrary::OpenBLAS);
}

TEST(GemmLibrary, TheManifestsChoiceWinsForItsShapeOnly) {
  GemmShape2D listed{64, 32, 16, false, true};
  for (GemmLibrary library : {GemmLibrary::OneDNN, GemmLibrary::OpenBLAS}) {
    ContextWithChoice c(listed, library);
    EXPECT_EQ(pdrt::chooseGemmLibrary(&c.ctx, listed), library);
    GemmShape2D other{64, 32, 16, true, false};
    EXPECT_EQ(pdrt::chooseGemmLibrary(&c.ctx, other),
              pdrt::defaultGemmLibrary(other));
  }
  EXPECT_EQ(pdrt::chooseGemmLibrary(nullptr, listed),
            pdrt::defaultGemmLibrary(listed));
}

/// alpha op(A) op(B) + beta C0 in double (beta == 0 ignores C0).
std::vector<double> reference(const std::vector<float> &a,
                              const std::vector<float> &b,
                              const std::vector<float> &c0,
                              const GemmShape2D &g, float alpha, float beta) {
  std::vector<double> want(g.m * g.n);
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < g.k; ++p)
        s += (double)a[g.transA ? p * g.m + i : i * g.k + p] *
             b[g.transB ? j * g.k + p : p * g.n + j];
      want[i * g.n + j] =
          alpha * s + (beta == 0.0f ? 0.0 : beta * (double)c0[i * g.n + j]);
    }
  return want;
}

TEST(GemmLibrary, BothLibrariesComputeEveryTransposeCombination) {
  unsigned seed = 1;
  for (GemmLibrary library : {GemmLibrary::OneDNN, GemmLibrary::OpenBLAS})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (float beta : {0.0f, 1.0f, -0.5f}) {
          // Off the kernels' blocks, k past one.
          GemmShape2D g{37, 70, 300, ta, tb};
          ContextWithChoice c(g, library);
          std::vector<float> a = randomVector(g.m * g.k, seed),
                             b = randomVector(g.k * g.n, seed + 1),
                             c0 = randomVector(g.m * g.n, seed + 2);
          seed += 3;
          std::vector<float> out = c0;
          if (beta == 0.0f)
            out.assign(g.m * g.n, std::numeric_limits<float>::quiet_NaN());
          pdrt_matmul(&c.ctx, a.data(), b.data(), out.data(), g.m, g.n, g.k,
                      ta, tb, 1.5f, beta);
          std::vector<double> want = reference(a, b, c0, g, 1.5f, beta);
          std::string what = std::string(library == GemmLibrary::OneDNN
                                             ? "oneDNN"
                                             : "OpenBLAS") +
                             " ta " + std::to_string(ta) + " tb " +
                             std::to_string(tb) + " beta " +
                             std::to_string(beta);
          ASSERT_FALSE(c.ctx.failed) << what << ": " << c.ctx.error;
          for (size_t i = 0; i < out.size(); ++i)
            ASSERT_NEAR(out[i], want[i], 1e-4 * (1.0 + std::fabs(want[i])))
                << what << " at " << i;
        }
}

// PDRT_GEMM_LIBRARY=alternate (pdc --profile): each microbatch of a step
// runs on oneDNN and OpenBLAS in turn over the steps, so each library gets
// every position equally often; one microbatch per step alternates per
// step.
TEST(GemmLibrary, AlternationGivesEachMicrobatchBothLibraries) {
  auto libraries = [](int64_t m, int64_t count) {
    std::string s;
    for (int64_t g = 0; g < count; ++g)
      s += pdrt::alternateGemmLibrary(g, m) == GemmLibrary::OneDNN ? 'd' : 'b';
    return s;
  };
  EXPECT_EQ(libraries(2, 8), "dbbddbbd");
  EXPECT_EQ(libraries(3, 6), "dbdbdb");
  EXPECT_EQ(libraries(1, 4), "dbdb");
  EXPECT_EQ(libraries(0, 4), "dbdb"); // no manifest: as m = 1
}

TEST(GemmLibrary, AProfiledOpListsTheShapesItRan) {
  pdrt_ctx ctx;
  std::vector<float> a(8 * 8, 1.0f), b(8 * 8, 1.0f), c(8 * 8);
  // Not profiling: nothing recorded.
  pdrt_matmul(&ctx, a.data(), b.data(), c.data(), 8, 8, 8, 0, 0, 1.0f, 0.0f);
  EXPECT_TRUE(ctx.opGemms.empty());
  ctx.profile = true;
  ctx.profileMark = 3;
  pdrt_matmul(&ctx, a.data(), b.data(), c.data(), 8, 8, 8, 0, 0, 1.0f, 0.0f);
  pdrt_matmul(&ctx, a.data(), b.data(), c.data(), 8, 8, 8, 0, 0, 1.0f, 0.0f);
  pdrt_matmul(&ctx, a.data(), b.data(), c.data(), 4, 8, 2, 1, 0, 1.0f, 0.0f);
  ASSERT_EQ(ctx.opGemms.size(), 1u);
  const std::vector<GemmShape2D> &shapes = ctx.opGemms[3];
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[0].m, 8);
  EXPECT_EQ(shapes[1].m, 4);
  EXPECT_EQ(shapes[1].k, 2);
  EXPECT_TRUE(shapes[1].transA && !shapes[1].transB);
}

} // namespace
