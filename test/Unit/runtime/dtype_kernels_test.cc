//===- dtype_kernels_test.cc - Cast, compare and not against hand values ----===//
//
// pdrt_cast between f32, int64, int32 and bool (truncation, saturation, NaN,
// wrapping, copies, bad type codes), pdrt_compare for every op and element
// type with numpy broadcasting (NaN, int64 values a float would merge, the
// bool-only logic ops and their errors), pdrt_not, and the scalar rules of
// pdrt_tensor_numerics.h.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "pdrt/pdrt.h"
#include "pdrt/pdrt_tensor_numerics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace {

/// pdrt_cast of a whole vector.
template <typename To, typename From>
std::vector<To> cast(const std::vector<From> &x, int32_t from, int32_t to) {
  std::vector<To> y(x.size());
  pdrt_cast(nullptr, x.data(), y.data(), (int64_t)x.size(), from, to);
  return y;
}

TEST(Cast, FloatToIntegersTruncatesTowardZeroAndSaturates) {
  const float nan = NAN, inf = INFINITY;
  std::vector<float> x = {1.9f, -1.9f, 0.5f, -0.0f, 3e10f, -3e10f, nan, inf};
  EXPECT_EQ(cast<int64_t>(x, PDRT_DT_F32, PDRT_DT_I64),
            (std::vector<int64_t>{1, -1, 0, 0, 30000001024LL, -30000001024LL, 0,
                                  std::numeric_limits<int64_t>::max()}));
  EXPECT_EQ(cast<int32_t>(x, PDRT_DT_F32, PDRT_DT_I32),
            (std::vector<int32_t>{1, -1, 0, 0, std::numeric_limits<int32_t>::max(),
                                  std::numeric_limits<int32_t>::min(), 0,
                                  std::numeric_limits<int32_t>::max()}));
  // The largest float below 2^31 converts exactly; -2^31 is in range.
  std::vector<float> edge = {2147483520.0f, -2147483648.0f};
  EXPECT_EQ(cast<int32_t>(edge, PDRT_DT_F32, PDRT_DT_I32),
            (std::vector<int32_t>{2147483520, std::numeric_limits<int32_t>::min()}));
}

TEST(Cast, ToAndFromBool) {
  std::vector<float> f = {0.0f, -0.0f, 0.25f, -3.0f, NAN};
  EXPECT_EQ(cast<uint8_t>(f, PDRT_DT_F32, PDRT_DT_BOOL),
            (std::vector<uint8_t>{0, 0, 1, 1, 1}));
  std::vector<int64_t> l = {0, -7, 1LL << 40};
  EXPECT_EQ(cast<uint8_t>(l, PDRT_DT_I64, PDRT_DT_BOOL),
            (std::vector<uint8_t>{0, 1, 1}));
  std::vector<int32_t> i = {0, 2};
  EXPECT_EQ(cast<uint8_t>(i, PDRT_DT_I32, PDRT_DT_BOOL), (std::vector<uint8_t>{0, 1}));
  std::vector<uint8_t> b = {0, 1, 1, 0};
  EXPECT_EQ(cast<float>(b, PDRT_DT_BOOL, PDRT_DT_F32),
            (std::vector<float>{0, 1, 1, 0}));
  EXPECT_EQ(cast<int64_t>(b, PDRT_DT_BOOL, PDRT_DT_I64),
            (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(cast<int32_t>(b, PDRT_DT_BOOL, PDRT_DT_I32),
            (std::vector<int32_t>{0, 1, 1, 0}));
}

TEST(Cast, BetweenIntegersAndToFloat) {
  std::vector<int64_t> l = {5, -5, (1LL << 32) + 7, 16777217};
  EXPECT_EQ(cast<int32_t>(l, PDRT_DT_I64, PDRT_DT_I32),
            (std::vector<int32_t>{5, -5, 7, 16777217})); // wraps mod 2^32
  // 2^32 + 7 and 2^24 + 1 round to the nearest floats, 2^32 and 2^24.
  EXPECT_EQ(cast<float>(l, PDRT_DT_I64, PDRT_DT_F32),
            (std::vector<float>{5, -5, 4294967296.0f, 16777216.0f}));
  std::vector<int32_t> i = {-2147483647 - 1, 3};
  EXPECT_EQ(cast<int64_t>(i, PDRT_DT_I32, PDRT_DT_I64),
            (std::vector<int64_t>{-2147483648LL, 3}));
  EXPECT_EQ(cast<float>(i, PDRT_DT_I32, PDRT_DT_F32),
            (std::vector<float>{-2147483648.0f, 3.0f}));
}

TEST(Cast, SameTypeCopiesBits) {
  std::vector<float> f = {1.5f, NAN};
  std::vector<float> g = cast<float>(f, PDRT_DT_F32, PDRT_DT_F32);
  EXPECT_EQ(g[0], 1.5f);
  EXPECT_TRUE(std::isnan(g[1]));
  std::vector<int64_t> l = {-1, 1LL << 62};
  EXPECT_EQ(cast<int64_t>(l, PDRT_DT_I64, PDRT_DT_I64), l);
  std::vector<uint8_t> b = {0, 1};
  EXPECT_EQ(cast<uint8_t>(b, PDRT_DT_BOOL, PDRT_DT_BOOL), b);
}

TEST(Cast, UnknownTypeIsAContextError) {
  pdrt_ctx ctx;
  float x = 1;
  int64_t y = -1;
  pdrt_cast(&ctx, &x, &y, 1, PDRT_DT_F32, 4);
  ASSERT_TRUE(ctx.failed);
  EXPECT_EQ(ctx.error, "pdrt_cast: unknown element type 4");
  EXPECT_EQ(y, -1);
  pdrt_ctx ctx2;
  pdrt_cast(&ctx2, &x, &y, 1, -1, PDRT_DT_I64);
  EXPECT_EQ(ctx2.error, "pdrt_cast: unknown element type -1");
}

/// pdrt_compare of a [2, 3] against b [3] (broadcast over rows).
template <typename T>
std::vector<uint8_t> compareRows(int op, const std::vector<T> &a,
                                 const std::vector<T> &b, int32_t dtype) {
  const int64_t desc[] = {2, 2, 3, 3, 1, 0, 1};
  std::vector<uint8_t> out(6, 9);
  pdrt_compare(nullptr, op, a.data(), b.data(), out.data(), desc, dtype);
  return out;
}

TEST(Compare, FloatOpsBroadcastAndNaNIsFalse) {
  const float nan = NAN;
  std::vector<float> a = {1, 2, 3, nan, -1, 5}, b = {2, 2, 2};
  using V = std::vector<uint8_t>;
  EXPECT_EQ(compareRows(PDRT_CMP_EQ, a, b, PDRT_DT_F32), (V{0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(compareRows(PDRT_CMP_LT, a, b, PDRT_DT_F32), (V{1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(compareRows(PDRT_CMP_LE, a, b, PDRT_DT_F32), (V{1, 1, 0, 0, 1, 0}));
  EXPECT_EQ(compareRows(PDRT_CMP_GT, a, b, PDRT_DT_F32), (V{0, 0, 1, 0, 0, 1}));
  EXPECT_EQ(compareRows(PDRT_CMP_GE, a, b, PDRT_DT_F32), (V{0, 1, 1, 0, 0, 1}));
}

TEST(Compare, Int64ComparesExactlyAndInt32) {
  // 2^53 and 2^53 + 1 are one float (and one double): compared as int64.
  const int64_t big = 1LL << 53;
  std::vector<int64_t> a = {big + 1, big, -3, 0, 7, big}, b = {big, big, -3};
  using V = std::vector<uint8_t>;
  EXPECT_EQ(compareRows(PDRT_CMP_EQ, a, b, PDRT_DT_I64), (V{0, 1, 1, 0, 0, 0}));
  EXPECT_EQ(compareRows(PDRT_CMP_GT, a, b, PDRT_DT_I64), (V{1, 0, 0, 0, 0, 1}));
  EXPECT_EQ(compareRows(PDRT_CMP_LE, a, b, PDRT_DT_I64), (V{0, 1, 1, 1, 1, 0}));
  std::vector<int32_t> c = {-1, 0, 1, 2, 3, 4}, d = {0, 0, 3};
  EXPECT_EQ(compareRows(PDRT_CMP_LT, c, d, PDRT_DT_I32), (V{1, 0, 1, 0, 0, 0}));
  EXPECT_EQ(compareRows(PDRT_CMP_GE, c, d, PDRT_DT_I32), (V{0, 1, 0, 1, 1, 1}));
}

TEST(Compare, LogicOpsOnBoolsBroadcast) {
  // a [2, 1] broadcast along columns against b [3] along rows: out [2, 3].
  std::vector<uint8_t> a = {0, 1}, b = {0, 1, 1};
  const int64_t desc[] = {2, 2, 3, 1, 0, 0, 1};
  using V = std::vector<uint8_t>;
  auto logic = [&](int op) {
    V out(6, 9);
    pdrt_compare(nullptr, op, a.data(), b.data(), out.data(), desc, PDRT_DT_BOOL);
    return out;
  };
  EXPECT_EQ(logic(PDRT_LOGIC_AND), (V{0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(logic(PDRT_LOGIC_OR), (V{0, 1, 1, 1, 1, 1}));
  EXPECT_EQ(logic(PDRT_LOGIC_XOR), (V{0, 1, 1, 1, 0, 0}));
  EXPECT_EQ(logic(PDRT_CMP_EQ), (V{1, 0, 0, 0, 1, 1}));
  EXPECT_EQ(logic(PDRT_CMP_LT), (V{0, 1, 1, 0, 0, 0}));
}

TEST(Compare, ErrorsNameTheBadValue) {
  const int64_t scalar[] = {0};
  float x = 1, y = 2;
  uint8_t out = 9;
  auto error = [&](int op, int32_t dtype, const int64_t *desc) {
    pdrt_ctx ctx;
    pdrt_compare(&ctx, op, &x, &y, &out, desc, dtype);
    return ctx.error;
  };
  EXPECT_EQ(error(PDRT_LOGIC_AND, PDRT_DT_F32, scalar),
            "pdrt_compare: logic op 5 needs bool operands, not element type 0");
  EXPECT_EQ(error(PDRT_LOGIC_XOR, PDRT_DT_I64, scalar),
            "pdrt_compare: logic op 7 needs bool operands, not element type 1");
  EXPECT_EQ(error(8, PDRT_DT_F32, scalar), "pdrt_compare: unknown op 8");
  EXPECT_EQ(error(PDRT_CMP_EQ, 9, scalar), "pdrt_compare: unknown element type 9");
  const int64_t deep[] = {9};
  EXPECT_EQ(error(PDRT_CMP_EQ, PDRT_DT_F32, deep), "pdrt_compare: rank 9 exceeds 8");
  EXPECT_EQ(out, 9);
  // A scalar comparison works.
  pdrt_compare(nullptr, PDRT_CMP_LT, &x, &y, &out, scalar, PDRT_DT_F32);
  EXPECT_EQ(out, 1);
}

TEST(Not, FlipsBoolsAndTreatsNonzeroAsTrue) {
  std::vector<uint8_t> x = {0, 1, 1, 0, 2}, y(5, 9);
  pdrt_not(nullptr, x.data(), y.data(), 5);
  EXPECT_EQ(y, (std::vector<uint8_t>{1, 0, 0, 1, 0}));
}

TEST(DtypeNumerics, ScalarRules) {
  EXPECT_EQ(pdrt_f32_to_i64(-2.5f), -2);
  EXPECT_EQ(pdrt_f32_to_i64(-9.3e18f), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(pdrt_f32_to_i32(NAN), 0);
  EXPECT_EQ((pdrt_cast_value<uint8_t, float>(-0.0f)), 0);
  EXPECT_EQ((pdrt_cast_value<int64_t, uint8_t>(2)), 1);
  EXPECT_EQ(pdrt_compare_apply<int64_t>(PDRT_CMP_LE, 3, 3), 1);
  EXPECT_EQ(pdrt_compare_apply<uint8_t>(PDRT_LOGIC_XOR, 2, 1), 0);
  int64_t strides[3];
  const int64_t dims[] = {2, 3, 4};
  EXPECT_EQ(pdrt_dense_strides(3, dims, strides), 24);
  EXPECT_EQ(strides[0], 12);
  EXPECT_EQ(strides[1], 4);
  EXPECT_EQ(strides[2], 1);
}

} // namespace
