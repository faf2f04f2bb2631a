//===- tensor_kernels_test.cc - Tensor kernels against references ---------===//
//
// pdrt_permute (transpose, negative-step slice, broadcast), pdrt_scatter
// and pdrt_scatter_any (slice gradient, concat of f32, int64 and bool),
// pdrt_gather / pdrt_gather_grad (axes, negative and repeated indices,
// out-of-range errors), pdrt_gather_elements / its gradient (ONNX's
// examples, any axis, negative and repeated indices, errors), pdrt_where /
// pdrt_where_any / pdrt_where_grad with broadcasting, pdrt_pad_value for
// 1-, 4- and 8-byte elements, and pdrt_batch_matmul against naive loops.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "pdrt/pdrt.h"
#include "pdrt/pdrt_tensor_numerics.h"

#include <gtest/gtest.h>

#include <cstring>
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
  pdrt_gather_grad(nullptr, dout.data(), idx.data(), dtable.data(), 1, 3, 4, 2,
                   PDRT_SCATTER_ZERO_FIRST);
  EXPECT_EQ(dtable, (std::vector<float>{0, 0, 11, 22, 0, 0, 100, 200}));
}

// Into an accumulator (pd-accumulate-in-place): the rows are added to what
// it holds, each index's row in index order, the other rows untouched.
TEST(TensorKernels, GatherGradIntoAnAccumulatorAddsInIndexOrder) {
  std::vector<float> dout = {1, 2, 10, 20, 100, 200}, dtable(8, 5.0f);
  std::vector<int64_t> idx = {1, -3, 3};
  pdrt_gather_grad(nullptr, dout.data(), idx.data(), dtable.data(), 1, 3, 4, 2,
                   PDRT_SCATTER_INTO);
  EXPECT_EQ(dtable, (std::vector<float>{5, 5, (5.0f + 1) + 10, (5.0f + 2) + 20,
                                        5, 5, 105, 205}));
  // Two outer slices (axis 1 of a [2, 4, 2] table).
  std::vector<float> two(16, 1.0f), dout2 = {1, 2, 3, 4};
  std::vector<int64_t> one = {2};
  pdrt_gather_grad(nullptr, dout2.data(), one.data(), two.data(), 2, 1, 4, 2,
                   PDRT_SCATTER_INTO);
  EXPECT_EQ(two, (std::vector<float>{1, 1, 1, 1, 2, 3, 1, 1,
                                     1, 1, 1, 1, 4, 5, 1, 1}));
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
  pdrt_gather_grad(&ctx2, out.data(), neg.data(), dtable.data(), 1, 1, 4, 2,
                   PDRT_SCATTER_ZERO_FIRST);
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

TEST(TensorKernels, ScatterAnyConcatenatesInt64AndBool) {
  // concat([2, 2], [2, 1], axis 1) of int64 into [2, 3]: each part written
  // through y's strides (3, 1) from its column offset.
  std::vector<int64_t> p = {1, 2, 4, 5}, q = {-3, -6}, y(6, 0);
  const int64_t left[] = {2, 2, 2, 3, 1}, right[] = {2, 2, 1, 3, 1};
  pdrt_scatter_any(nullptr, p.data(), y.data(), 6, 0, left, 0, sizeof(int64_t));
  pdrt_scatter_any(nullptr, q.data(), y.data(), 6, 2, right, 0, sizeof(int64_t));
  EXPECT_EQ(y, (std::vector<int64_t>{1, 2, -3, 4, 5, -6}));
  // Bools with zero_first: only the window survives.
  std::vector<uint8_t> b = {1, 1}, yb(4, 7);
  const int64_t one[] = {1, 2, 2};
  pdrt_scatter_any(nullptr, b.data(), yb.data(), 4, 1, one, 1, 1);
  EXPECT_EQ(yb, (std::vector<uint8_t>{0, 1, 0, 1}));
}

TEST(TensorKernels, ScatterAnyBadElementSizeIsAContextError) {
  pdrt_ctx ctx;
  std::vector<int16_t> x = {1}, y = {5};
  const int64_t desc[] = {1, 1, 1};
  pdrt_scatter_any(&ctx, x.data(), y.data(), 1, 0, desc, 0, 2);
  ASSERT_TRUE(ctx.failed);
  EXPECT_EQ(ctx.error, "pdrt_scatter_any: element size 2 is not 1, 4 or 8");
  EXPECT_EQ(y[0], 5);
}

/// A naive GatherElements of rank-3 data [d0, d1, d2] (int64) along `axis`
/// with indices [i0, i1, i2]: the reference the kernel must match.
std::vector<int64_t> gatherElementsRef(const std::vector<int64_t> &data,
                                       const int64_t *dd,
                                       const std::vector<int64_t> &idx,
                                       const int64_t *id, int axis) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < id[0]; ++i)
    for (int64_t j = 0; j < id[1]; ++j)
      for (int64_t k = 0; k < id[2]; ++k) {
        int64_t c[3] = {i, j, k};
        int64_t v = idx[(i * id[1] + j) * id[2] + k];
        c[axis] = v < 0 ? v + dd[axis] : v;
        out.push_back(data[(c[0] * dd[1] + c[1]) * dd[2] + c[2]]);
      }
  return out;
}

TEST(TensorKernels, GatherElementsOnnxExamples) {
  // ONNX's example 1: axis 1.
  std::vector<float> d1 = {1, 2, 3, 4}, out1(4);
  std::vector<int64_t> i1 = {0, 0, 1, 0};
  const int64_t desc1[] = {2, 1, 2, 2, 2, 2};
  pdrt_gather_elements(nullptr, d1.data(), i1.data(), out1.data(), desc1, 4);
  EXPECT_EQ(out1, (std::vector<float>{1, 1, 4, 3}));
  // ONNX's example 2: axis 0, indices [2, 3] of data [3, 3].
  std::vector<float> d2 = {1, 2, 3, 4, 5, 6, 7, 8, 9}, out2(6);
  std::vector<int64_t> i2 = {1, 2, 0, 2, 0, 0};
  const int64_t desc2[] = {2, 0, 3, 3, 2, 3};
  pdrt_gather_elements(nullptr, d2.data(), i2.data(), out2.data(), desc2, 4);
  EXPECT_EQ(out2, (std::vector<float>{4, 8, 3, 7, 2, 3}));
  // Negative axis and negative indices: axis -1 of [2, 2].
  std::vector<int64_t> i3 = {-1, 0, -2, -1};
  const int64_t desc3[] = {2, -1, 2, 2, 2, 2};
  pdrt_gather_elements(nullptr, d1.data(), i3.data(), out1.data(), desc3, 4);
  EXPECT_EQ(out1, (std::vector<float>{2, 1, 3, 4}));
}

TEST(TensorKernels, GatherElementsEveryAxisOfRank3Int64AndBytes) {
  // data [2, 3, 4] of int64; indices [2, 2, 3] are smaller than data off
  // the axis, so the walk's strides are data's, not the indices'.
  const int64_t dd[] = {2, 3, 4}, id[] = {2, 2, 3};
  std::vector<int64_t> data(24);
  for (int64_t i = 0; i < 24; ++i)
    data[i] = 1000 + i;
  std::vector<int64_t> idx = {0, 1, -1, 1, 0, 0, -2, 1, 0, 1, 1, -1};
  for (int axis = 0; axis < 3; ++axis) {
    std::vector<int64_t> ix = idx;
    for (int64_t &v : ix) // keep every index inside [-dim, dim)
      v = v % dd[axis];
    const int64_t desc[] = {3, axis, 2, 3, 4, 2, 2, 3};
    std::vector<int64_t> out(12, -1);
    pdrt_gather_elements(nullptr, data.data(), ix.data(), out.data(), desc,
                         sizeof(int64_t));
    EXPECT_EQ(out, gatherElementsRef(data, dd, ix, id, axis)) << "axis " << axis;
    // The same gather on bytes (bool data).
    std::vector<uint8_t> bytes(24), outB(12);
    for (int64_t i = 0; i < 24; ++i)
      bytes[i] = (uint8_t)i;
    pdrt_gather_elements(nullptr, bytes.data(), ix.data(), outB.data(), desc, 1);
    for (int64_t i = 0; i < 12; ++i)
      EXPECT_EQ(outB[i] + 1000, out[i]) << "axis " << axis << " element " << i;
  }
}

TEST(TensorKernels, GatherElementsGradAccumulatesRepeatedIndices) {
  // data [2, 3], axis 1: row 0 reads columns 0, 0, 2; row 1 reads column 1
  // three times (once as -2).
  std::vector<float> dout = {1, 2, 3, 4, 5, 6}, ddata(6, 7.0f);
  std::vector<int64_t> idx = {0, 0, 2, 1, -2, 1};
  const int64_t desc[] = {2, 1, 2, 3, 2, 3};
  pdrt_gather_elements_grad(nullptr, dout.data(), idx.data(), ddata.data(), desc);
  EXPECT_EQ(ddata, (std::vector<float>{3, 0, 3, 0, 15, 0}));
  // Axis 0 with fewer index rows than data rows: untouched rows are zero.
  std::vector<float> d0 = {1, 2}, dd0(6, 7.0f);
  std::vector<int64_t> i0 = {2, 2};
  const int64_t desc0[] = {2, 0, 3, 2, 1, 2};
  pdrt_gather_elements_grad(nullptr, d0.data(), i0.data(), dd0.data(), desc0);
  EXPECT_EQ(dd0, (std::vector<float>{0, 0, 0, 0, 1, 2}));
}

TEST(TensorKernels, GatherElementsIndexOutOfRangeIsAContextError) {
  std::vector<float> data = {1, 2, 3, 4}, out(4, -1.0f);
  const int64_t desc[] = {2, 1, 2, 2, 2, 2};
  pdrt_ctx ctx;
  std::vector<int64_t> idx = {0, 1, -2, 2}; // flat position 3 is bad
  pdrt_gather_elements(&ctx, data.data(), idx.data(), out.data(), desc, 4);
  ASSERT_TRUE(ctx.failed);
  EXPECT_EQ(ctx.error,
            "pdrt_gather_elements: index 2 at position 3 is outside [-2, 2)");
  EXPECT_EQ(out, (std::vector<float>(4, -1.0f))); // nothing written

  pdrt_ctx ctx2;
  std::vector<int64_t> neg = {0, -3, 0, 0};
  std::vector<float> ddata(4, 5.0f);
  pdrt_gather_elements_grad(&ctx2, out.data(), neg.data(), ddata.data(), desc);
  ASSERT_TRUE(ctx2.failed);
  EXPECT_EQ(ctx2.error,
            "pdrt_gather_elements_grad: index -3 at position 1 is outside [-2, 2)");
  EXPECT_EQ(ddata, (std::vector<float>(4, 5.0f)));
}

TEST(TensorKernels, GatherElementsBadDescriptorIsAContextError) {
  std::vector<float> data(4), out(4);
  std::vector<int64_t> idx(4, 0);
  auto error = [&](std::vector<int64_t> desc, int64_t elemSize) {
    pdrt_ctx ctx;
    pdrt_gather_elements(&ctx, data.data(), idx.data(), out.data(), desc.data(),
                         elemSize);
    return ctx.error;
  };
  EXPECT_EQ(error({2, 2, 2, 2, 2, 2}, 4),
            "pdrt_gather_elements: axis 2 is outside [-2, 2)");
  EXPECT_EQ(error({2, -3, 2, 2, 2, 2}, 4),
            "pdrt_gather_elements: axis -3 is outside [-2, 2)");
  EXPECT_EQ(error({0, 0}, 4), "pdrt_gather_elements: rank 0 is outside [1, 8]");
  EXPECT_EQ(error({2, 0, 2, 1, 2, 2}, 4),
            "pdrt_gather_elements: index dim 1 (2) exceeds the data's (1)");
  EXPECT_EQ(error({2, 0, 2, 2, 2, 2}, 2),
            "pdrt_gather_elements: element size 2 is not 1, 4 or 8");
}

TEST(TensorKernels, WhereAnyInt64AndBoolBroadcast) {
  // cond [1, 3], a [2, 3] int64, b scalar -> out [2, 3].
  std::vector<uint8_t> cond = {1, 0, 1};
  std::vector<int64_t> a = {10, 11, 12, 13, 14, 15}, b = {-100}, out(6);
  const int64_t desc[] = {2, 2, 3, 0, 1, 3, 1, 0, 0};
  pdrt_where_any(nullptr, cond.data(), a.data(), b.data(), out.data(), desc,
                 sizeof(int64_t));
  EXPECT_EQ(out, (std::vector<int64_t>{10, -100, 12, 13, -100, 15}));
  // Bools: a scalar true, b [2, 1] broadcast along columns.
  std::vector<uint8_t> t = {1}, f = {0, 1}, outB(6, 9);
  const int64_t bdesc[] = {2, 2, 3, 0, 1, 0, 0, 1, 0};
  pdrt_where_any(nullptr, cond.data(), t.data(), f.data(), outB.data(), bdesc, 1);
  EXPECT_EQ(outB, (std::vector<uint8_t>{1, 0, 1, 1, 1, 1}));
  pdrt_ctx ctx;
  pdrt_where_any(&ctx, cond.data(), t.data(), f.data(), outB.data(), bdesc, 3);
  ASSERT_TRUE(ctx.failed);
  EXPECT_EQ(ctx.error, "pdrt_where_any: element size 3 is not 1, 4 or 8");
}

TEST(TensorKernels, PadValueInt64FloatBitsAndBool) {
  // int64 [2] -> [5] at begin 1, filled with -100 (an ignore_index).
  std::vector<int64_t> x = {5, 6}, y(5, 0);
  const int64_t d1[] = {1, 2, 5, 1};
  pdrt_pad_value(nullptr, x.data(), y.data(), d1, sizeof(int64_t), -100);
  EXPECT_EQ(y, (std::vector<int64_t>{-100, 5, 6, -100, -100}));
  // f32 [2, 2] -> [3, 4] at (1, 1), filled with -1.5f passed as its bits,
  // zero-extended or sign-extended from 32 bits (only the low 4 bytes count).
  float fill = -1.5f;
  uint32_t bits;
  std::memcpy(&bits, &fill, 4);
  std::vector<float> fx = {1, 2, 3, 4}, fy(12);
  const int64_t d2[] = {2, 2, 2, 3, 4, 1, 1};
  const float f = -1.5f;
  const std::vector<float> want = {f, f, f, f, f, 1, 2, f, f, 3, 4, f};
  pdrt_pad_value(nullptr, fx.data(), fy.data(), d2, 4, (int64_t)bits);
  EXPECT_EQ(fy, want);
  pdrt_pad_value(nullptr, fx.data(), fy.data(), d2, 4, (int64_t)(int32_t)bits);
  EXPECT_EQ(fy, want);
  // bool [1, 2] -> [2, 3] at (0, 1), filled with true.
  std::vector<uint8_t> bx = {0, 0}, by(6, 9);
  const int64_t d3[] = {2, 1, 2, 2, 3, 0, 1};
  pdrt_pad_value(nullptr, bx.data(), by.data(), d3, 1, 1);
  EXPECT_EQ(by, (std::vector<uint8_t>{1, 0, 0, 1, 1, 1}));
  // Rank 0 copies the one element.
  float s = 3, t = 0;
  const int64_t d0[] = {0};
  pdrt_pad_value(nullptr, &s, &t, d0, 4, 0);
  EXPECT_EQ(t, 3.0f);
}

TEST(TensorKernels, PadValueRejectsXOutsideYAndBadSizes) {
  std::vector<int64_t> x = {5, 6}, y(3, 0);
  auto error = [&](std::vector<int64_t> desc, int64_t elemSize) {
    pdrt_ctx ctx;
    pdrt_pad_value(&ctx, x.data(), y.data(), desc.data(), elemSize, 0);
    return ctx.error;
  };
  EXPECT_EQ(error({1, 2, 3, 2}, 8),
            "pdrt_pad_value: axis 0: x dim 2 at begin 2 does not fit y dim 3");
  EXPECT_EQ(error({1, 2, 3, -1}, 8),
            "pdrt_pad_value: axis 0: x dim 2 at begin -1 does not fit y dim 3");
  EXPECT_EQ(error({1, 2, 3, 0}, 5),
            "pdrt_pad_value: element size 5 is not 1, 4 or 8");
  EXPECT_EQ(error({9}, 8), "pdrt_pad_value: rank 9 exceeds 8");
  EXPECT_EQ(y, (std::vector<int64_t>(3, 0)));
  // pdrt_pad (f32 zero padding) goes through the same checks.
  pdrt_ctx ctx;
  std::vector<float> fx = {1, 2}, fy(3, 9.0f);
  const int64_t bad[] = {1, 2, 3, 2};
  pdrt_pad(&ctx, fx.data(), fy.data(), bad);
  ASSERT_TRUE(ctx.failed);
  EXPECT_EQ(ctx.error, "pdrt_pad: axis 0: x dim 2 at begin 2 does not fit y dim 3");
  EXPECT_EQ(fy, (std::vector<float>(3, 9.0f)));
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
