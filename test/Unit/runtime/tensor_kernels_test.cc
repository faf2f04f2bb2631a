//===- tensor_kernels_test.cc - Tensor kernels against references ---------===//
//
// pdrt_permute (transpose, negative-step slice, broadcast), pdrt_scatter
// (slice gradient, concat), pdrt_gather / pdrt_gather_grad (axes, negative
// and repeated indices, out-of-range errors), pdrt_where / pdrt_where_grad
// with broadcasting, and pdrt_batch_matmul against naive loops.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "pdrt/pdrt.h"
#include "pdrt/pdrt_tensor_numerics.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <vector>

namespace {

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

TEST(TensorKernels, PermuteTransposes) {
  // x [2, 3, 4] -> y [4, 2, 3] (perm 2, 0, 1): strides of x permuted.
  std::vector<float> x = iota(24), y(24);
  const int64_t desc[] = {3, 4, 2, 3, 1, 12, 4};
  pdrt_permute(nullptr, x.data(), y.data(), desc, sizeof(float));
  for (int64_t k = 0; k < 4; ++k)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        EXPECT_EQ(y[(k * 2 + i) * 3 + j], x[(i * 3 + j) * 4 + k]);
}

TEST(TensorKernels, PermuteReadsNegativeStepSlicesAndBroadcasts) {
  // x [6]: x[5], x[3], x[1] through stride -2 from offset 5.
  std::vector<float> x = iota(6), y(3);
  const int64_t slice[] = {1, 3, -2};
  pdrt_permute(nullptr, x.data() + 5, y.data(), slice, sizeof(float));
  EXPECT_EQ(y, (std::vector<float>{5, 3, 1}));
  // int64 [3] broadcast to [2, 3] (stride 0 on the new axis).
  std::vector<int64_t> a = {7, 8, 9}, b(6);
  const int64_t bcast[] = {2, 2, 3, 0, 1};
  pdrt_permute(nullptr, a.data(), b.data(), bcast, sizeof(int64_t));
  EXPECT_EQ(b, (std::vector<int64_t>{7, 8, 9, 7, 8, 9}));
}

TEST(TensorKernels, ScatterZeroFillsAndWritesWindow) {
  // The gradient of x[1:3, ::2] of a [3, 4] input.
  std::vector<float> dy = {1, 2, 3, 4}, dx(12, -1.0f);
  const int64_t desc[] = {2, 2, 2, 4, 2};
  pdrt_scatter(nullptr, dy.data(), dx.data(), 12, 4, desc, 1);
  EXPECT_EQ(dx, (std::vector<float>{0, 0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0}));
  // Without zero_first only the window is written (concat).
  const int64_t col[] = {1, 3, 4};
  std::vector<float> c = {9, 8, 7};
  pdrt_scatter(nullptr, c.data(), dx.data(), 12, 3, col, 0);
  EXPECT_EQ(dx[3], 9);
  EXPECT_EQ(dx[7], 8);
  EXPECT_EQ(dx[11], 7);
}

TEST(TensorKernels, GatherRowsWithNegativeIndices) {
  std::vector<float> table = iota(12), out(9); // [4, 3]
  std::vector<int64_t> idx = {2, -1, 0};
  pdrt_gather(nullptr, table.data(), idx.data(), out.data(), 1, 3, 4, 3,
              sizeof(float));
  EXPECT_EQ(out, (std::vector<float>{6, 7, 8, 9, 10, 11, 0, 1, 2}));
}

TEST(TensorKernels, GatherAlongMiddleAxis) {
  // data [2, 3, 2], axis 1, indices [1, 1] -> [2, 2, 2].
  std::vector<float> data = iota(12), out(8);
  std::vector<int64_t> idx = {1, 1};
  pdrt_gather(nullptr, data.data(), idx.data(), out.data(), 2, 2, 3, 2,
              sizeof(float));
  EXPECT_EQ(out, (std::vector<float>{2, 3, 2, 3, 8, 9, 8, 9}));
}

TEST(TensorKernels, GatherGradAccumulatesRepeatedIndices) {
  std::vector<float> dout = {1, 2, 10, 20, 100, 200}, dtable(8, 5.0f);
  std::vector<int64_t> idx = {1, -3, 3}; // rows 1, 1, 3 of a [4, 2] table
  pdrt_gather_grad(nullptr, dout.data(), idx.data(), dtable.data(), 1, 3, 4, 2);
  EXPECT_EQ(dtable, (std::vector<float>{0, 0, 11, 22, 0, 0, 100, 200}));
}

TEST(TensorKernels, GatherIndexOutOfRangeIsAContextError) {
  pdrt_ctx ctx;
  std::vector<float> table = iota(8), out(4, -1.0f);
  std::vector<int64_t> idx = {0, 4};
  pdrt_gather(&ctx, table.data(), idx.data(), out.data(), 1, 2, 4, 2,
              sizeof(float));
  ASSERT_TRUE(ctx.failed);
  EXPECT_EQ(ctx.error, "gather index 4 at position 1 is outside [-4, 4)");
  EXPECT_EQ(out, (std::vector<float>(4, -1.0f))); // nothing written

  pdrt_ctx ctx2;
  std::vector<int64_t> neg = {-5};
  std::vector<float> dtable(8);
  pdrt_gather_grad(&ctx2, out.data(), neg.data(), dtable.data(), 1, 1, 4, 2);
  ASSERT_TRUE(ctx2.failed);
  EXPECT_EQ(ctx2.error, "gather index -5 at position 0 is outside [-4, 4)");
}

TEST(TensorKernels, GatherRowNumerics) {
  EXPECT_EQ(pdrt_gather_row(-1, 5), 4);
  EXPECT_EQ(pdrt_gather_row(4, 5), 4);
  EXPECT_EQ(pdrt_gather_row(5, 5), -1);
  EXPECT_EQ(pdrt_gather_row(-6, 5), -1);
}

TEST(TensorKernels, WhereAndItsGradientBroadcast) {
  // cond [1, 3], a [2, 3], b scalar -> out [2, 3].
  std::vector<uint8_t> cond = {1, 0, 1};
  std::vector<float> a = iota(6), b = {-1}, out(6);
  const int64_t desc[] = {2, 2, 3, 0, 1, 3, 1, 0, 0};
  pdrt_where(nullptr, cond.data(), a.data(), b.data(), out.data(), desc);
  EXPECT_EQ(out, (std::vector<float>{0, -1, 2, 3, -1, 5}));
  std::vector<float> dy = {1, 2, 3, 4, 5, 6}, dx(6);
  const int64_t gdesc[] = {2, 2, 3, 0, 1};
  pdrt_where_grad(nullptr, dy.data(), cond.data(), dx.data(), gdesc, 0);
  EXPECT_EQ(dx, (std::vector<float>{1, 0, 3, 4, 0, 6}));
  pdrt_where_grad(nullptr, dy.data(), cond.data(), dx.data(), gdesc, 1);
  EXPECT_EQ(dx, (std::vector<float>{0, 2, 0, 0, 5, 0}));
}

TEST(TensorKernels, BatchMatmulMatchesNaiveLoops) {
  const int64_t batch = 3, m = 2, n = 4, k = 5;
  std::mt19937 gen(7);
  std::normal_distribution<float> dist;
  std::vector<float> a(batch * m * k), b(batch * k * n), c(batch * m * n);
  for (float &v : a)
    v = dist(gen);
  for (float &v : b)
    v = dist(gen);
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      pdrt_batch_matmul(nullptr, a.data(), b.data(), c.data(), batch, m, n, k,
                        ta, tb);
      for (int64_t s = 0; s < batch; ++s)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            const float *as = a.data() + s * m * k, *bs = b.data() + s * k * n;
            double want = 0;
            for (int64_t p = 0; p < k; ++p)
              want += (ta ? as[p * m + i] : as[i * k + p]) *
                      (tb ? bs[j * k + p] : bs[p * n + j]);
            EXPECT_NEAR(c[(s * m + i) * n + j], want, 1e-4)
                << "ta=" << ta << " tb=" << tb;
          }
    }
}

} // namespace
